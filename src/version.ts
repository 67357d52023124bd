import pkg from "../package.json" with { type: "json" };

/** The package version, shown by --version, the OpenAPI document and User-Agent. */
export const version: string = pkg.version;
