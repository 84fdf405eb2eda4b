// `npm run build-page`: builds the game page the server serves at `/` of its gRPC-Web
// listener (src/server/page.rs) into ../../assets/page/: page/index.html and page/page.css
// as they are, and page/main.ts (with the client's browser entry, src/index.ts) bundled
// and minified by esbuild into page.js. The bundle is committed, so that `cargo build`
// never needs Node.
// `npm run check-page` (--check): builds into a temporary directory instead and fails,
// naming each file, when it differs from the committed assets/page (the drift check).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const assets = join(pkg, "..", "..", "assets", "page");
const check = process.argv.includes("--check");
const FILES = ["index.html", "page.css", "page.js"];

async function buildInto(out) {
  mkdirSync(out, { recursive: true });
  copyFileSync(join(pkg, "page", "index.html"), join(out, "index.html"));
  copyFileSync(join(pkg, "page", "page.css"), join(out, "page.css"));
  await build({
    absWorkingDir: pkg,
    entryPoints: ["page/main.ts"],
    outfile: join(out, "page.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    // The licence comments of what is bundled (Apache-2.0 Connect-ES and protobuf-es) stay.
    legalComments: "eof",
    banner: {
      js: "// The chess-service game page: clients/typescript/page/ bundled by esbuild (npm run build-page).",
    },
    logLevel: "warning",
  });
}

if (!check) {
  await buildInto(assets);
  for (const name of FILES) console.log(`assets/page/${name}: ${readFileSync(join(assets, name)).length} bytes`);
  process.exit(0);
}

const tmp = mkdtempSync(join(tmpdir(), "chess-page-"));
try {
  await buildInto(tmp);
  const problems = [];
  for (const name of FILES) {
    let have;
    try {
      have = readFileSync(join(assets, name));
    } catch {
      problems.push(`missing: assets/page/${name}`);
      continue;
    }
    if (!have.equals(readFileSync(join(tmp, name)))) problems.push(`differs from clients/typescript/page: assets/page/${name}`);
  }
  const extra = readdirSync(assets).filter((n) => !FILES.includes(n));
  for (const name of extra) problems.push(`not built by npm run build-page: assets/page/${name}`);
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    console.error("run `npm run build-page` in clients/typescript and commit assets/page/");
    process.exit(1);
  }
  console.log(`assets/page matches clients/typescript/page (${FILES.length} files)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
