// The parked-wait tests of tests/mcp/parked-waits.test.mjs over Streamable
// HTTP: a thousand waiting requests, each on a connection of its own, with
// cancellation by dropping the request's connection.
process.env.TASKBOX_TEST_TRANSPORT = "http";
await import("../mcp/parked-waits.test.mjs");
