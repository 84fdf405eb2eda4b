// `npm run generate`: regenerates src/gen from ../../proto with buf.gen.yaml.
// `npm run check-generated` (--check): generates into a temporary directory instead and
// fails, naming each file, when it differs from the committed src/gen (the drift check).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");

function generate(outBase) {
  const args = ["generate", "--template", "buf.gen.yaml"];
  if (outBase) args.push("--output", outBase);
  // buf and protoc-gen-es are this package's devDependencies.
  const env = { ...process.env, PATH: join(pkg, "node_modules", ".bin") + delimiter + process.env.PATH };
  const run = spawnSync("buf", args, { cwd: pkg, env, stdio: "inherit" });
  if (run.error) throw run.error;
  if (run.status !== 0) {
    console.error(`buf ${args.join(" ")} failed (exit ${run.status})`);
    process.exit(1);
  }
}

function files(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  try {
    walk(dir);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  return out;
}

if (!check) {
  generate();
  console.log(`generated ${files(join(pkg, "src", "gen")).size} files into src/gen`);
  process.exit(0);
}

const tmp = mkdtempSync(join(tmpdir(), "chess-ts-gen-"));
try {
  generate(tmp);
  const fresh = files(join(tmp, "src", "gen"));
  const committed = files(join(pkg, "src", "gen"));
  const problems = [];
  for (const [name, bytes] of fresh) {
    const have = committed.get(name);
    if (!have) problems.push(`missing from src/gen: ${name}`);
    else if (!have.equals(bytes)) problems.push(`differs from the protos: src/gen/${name}`);
  }
  for (const name of committed.keys()) {
    if (!fresh.has(name)) problems.push(`not generated from any proto: src/gen/${name}`);
  }
  if (fresh.size === 0) problems.push("buf generated nothing");
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    console.error("src/gen is stale: run `npm run generate` and commit the result.");
    process.exit(1);
  }
  console.log(`src/gen matches the protos (${fresh.size} files)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
