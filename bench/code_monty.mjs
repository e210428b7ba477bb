// The Monty side of cella-bench-code (bench/code.c): runs the workloads of
// the JSON file given as argv[3] with @pydantic/monty from the npm prefix
// argv[2] (installed there by the bench) and prints, per workload,
// NAME \t MICROSECONDS \t RESULT-JSON (the median of the runs; per run for
// "tiny" and "run" workloads, per host call for "host" ones), or
// "#unavailable \t REASON" when the package cannot be loaded.
//
// A run is `new Monty(src).run()` (parse and run); a host workload is
// start() and one resume() per call of f, answered with x + 1.
import { createRequire } from 'module';
import { readFileSync } from 'fs';
import path from 'path';

const [npmDir, specPath] = process.argv.slice(2);
let monty, version;
try {
  const require = createRequire(path.join(path.resolve(npmDir), 'package.json'));
  monty = require('@pydantic/monty');
  const pkg = path.join(path.resolve(npmDir), 'node_modules/@pydantic/monty/package.json');
  version = JSON.parse(readFileSync(pkg, 'utf8')).version;
} catch (e) {
  console.log(`#unavailable\t@pydantic/monty cannot be loaded: ${String(e.message).split('\n')[0]}`);
  process.exit(0);
}
const { Monty, MontySnapshot } = monty;
console.log(`#version\t${version}`);

function oneRun(w) {
  const m = new Monty(w.src);
  if (w.kind !== 'host') return m.run();
  let p = m.start();
  while (p instanceof MontySnapshot) p = p.resume({ returnValue: p.args[0] + 1 });
  return p.output;
}

function toJson(v) {
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x));
}

const spec = JSON.parse(readFileSync(specPath, 'utf8'));
for (const w of spec.workloads) {
  try {
    const result = oneRun(w);
    const times = [];
    for (let r = 0; r < spec.runs; r++) {
      const n = w.kind === 'tiny' ? w.iters : 1;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) oneRun(w);
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      times.push(w.kind === 'run' ? us : us / w.iters);
    }
    times.sort((a, b) => a - b);
    const mid = times.length >> 1;
    const med = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
    console.log(`${w.name}\t${med.toFixed(4)}\t${toJson(result)}`);
  } catch (e) {
    console.log(`${w.name}\tERROR\t${String(e.message || e).split('\n')[0]}`);
  }
}
