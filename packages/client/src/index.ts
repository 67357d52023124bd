/**
 * The vault's typed HTTP client (docs/client.md): VaultClient, its resource
 * groups and error classes, the share-link envelope, the request (answer)
 * envelope of docs/requests.md, the failure text the
 * CLI and the MCP server print, and the API's types generated from the
 * server's OpenAPI document.
 */
export { DEFAULT_ADDR, DEFAULT_TIMEOUT_MS, VaultClient } from "./vault-client.js";
export type { VaultClientOptions } from "./vault-client.js";
export { AnswerTimeoutError, VaultApiError, VaultConnectionError, VaultInputError, VaultProtocolError } from "./errors.js";
export {
  EnvelopeError,
  isLinkKey,
  needsPassphrase,
  openEnvelope,
  openEnvelopeContent,
  parseEnvelope,
  prepareReveal,
  sealEnvelope,
  sealFileEnvelope,
  PASSPHRASE_ITERATIONS,
} from "./envelope.js";
export type { EnvelopeV1, Opened, OpenedFile, PreparedReveal } from "./envelope.js";
export { DEFAULT_FILE_TYPE, FILE_META_BYTES, fileSizeOfCiphertext, isMediaType, MAX_FILE_NAME_BYTES, safeFileName } from "./file-payload.js";
export type { SharedFile } from "./file-payload.js";
export { MAX_FILE_META_CHARS, openFileMeta, sealFileMeta } from "./file-meta.js";
export type { FileMeta } from "./file-meta.js";
export { generateRequestKeys, openAnswer, parseAnswerEnvelope, requestRevealProof, sealAnswer } from "./request-envelope.js";
export type { AnswerEnvelope, RequestKeys } from "./request-envelope.js";
export { DEFAULT_POLL_INTERVAL_MS, privateUrlOf, RequestsApi } from "./requests.js";
export { linkFragment, parseShareLink } from "./share-link.js";
export { parseReceipt } from "./receipts.js";
export type { DeviceLogin, LoginKey } from "./sso.js";
export type { ReceiptRef } from "./receipts.js";
export type { ShareLink } from "./share-link.js";
export { describeFailure, EXIT_NOT_ANSWERED, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE } from "./failure.js";
export type { FailureAudience } from "./failure.js";
export { encodeKey } from "./http.js";
export type { FetchLike } from "./http.js";
export { DEFAULT_RETRY } from "./retry.js";
export type { RetryOptions } from "./retry.js";
export { AuditApi, KeysApi, MeApi, OrgApi, OrgsApi, PrincipalsApi, RolesApi, WebhooksApi } from "./resources.js";
export type * from "./types.js";
export type { paths } from "./schema.js";

