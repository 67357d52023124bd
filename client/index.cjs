// "ephemeral-vault/client" for require(): the client package's CommonJS build, as it is (docs/client.md "Install").
module.exports = require("@ephemeral-vault/client");
