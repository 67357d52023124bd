// Declarations of "ephemeral-vault/client" for import: those of the client package (docs/client.md "Install").
export * from "@ephemeral-vault/client";
