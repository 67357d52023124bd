/** Where the generated client types live, relative to the package root. */
export declare const SCHEMA_PATH: string;
/** The TypeScript source of packages/client/src/schema.d.ts for an OpenAPI 3.1 document. */
export declare function renderSchema(doc: unknown): Promise<string>;
