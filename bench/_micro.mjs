// in-process: 200 concurrent retrieves per turn, like a loaded server's batch
const mod = await import(process.argv[2] + "/dist/index.js").catch(() => null);
