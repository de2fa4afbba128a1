// Trunk's one post_build hook: the steps run in order (trunk runs separate
// hooks of one stage at the same time, and both steps rewrite index.html).
await import("./strip-wasm.mjs");
await import("./csp-hash.mjs");
