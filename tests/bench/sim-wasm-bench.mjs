// The page worker's simulation run (simview::run: the simulation and its
// trace recording) as wasm in node's V8, the engine of Chromium, without
// the page: steadier than timing it in the browser. Build and run it with
// scripts/bench-sim-wasm.sh.
//   node tests/bench/sim-wasm-bench.mjs WASM [ROUNDS]
// For each run: the first run in a fresh instance (what a page's new worker
// does: V8 starts every function in its baseline compiler, Liftoff, and
// compiles the hot ones again with TurboFan while they run), then ROUNDS
// runs more, all in optimized code.
import { readFileSync } from "node:fs";

const [wasmPath, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg || 15);
const names = ["leader-kill, 1 h (idle, 3 servers)", "ls-add-leader n=5000", "sb-hour (500 chassis, 1 h)"];
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const rate = (ev, ms) => `${(ev / ms / 1e3).toFixed(2)} M events/s`;
const bytes = readFileSync(wasmPath);
for (const [which, name] of names.entries()) {
  // A fresh instance per run kind: each first run is cold.
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const run = instance.exports.bench_run;
  let t0 = performance.now();
  const ev = Number(run(which));
  const first = performance.now() - t0;
  if (ev === 0) throw new Error(`run ${which} failed`);
  const ms = [];
  for (let i = 0; i < rounds; i++) {
    t0 = performance.now();
    run(which);
    ms.push(performance.now() - t0);
  }
  const med = median(ms);
  console.log(
    `${name.padEnd(36)} ${ev} events: first run ${first.toFixed(1)} ms (${rate(ev, first)}); ` +
      `then median ${med.toFixed(1)} ms (${rate(ev, med)}), best ${Math.min(...ms).toFixed(1)} ms over ${rounds} runs`,
  );
}
