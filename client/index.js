// "ephemeral-vault/client" for import: the client package, re-exported as it is (docs/client.md "Install").
export * from "@ephemeral-vault/client";
