// Every `ts` block of README.md, run in order against a real server (gRPC and gRPC-Web
// ports) as an ES module of this package, after TypeScript strips its types.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { test } from "node:test";
import ts from "typescript";
import { startServer } from "./server.js";

const here = dirname(fileURLToPath(import.meta.url)); // dist-test/, inside the package
const readme = readFileSync(join(here, "..", "README.md"), "utf8");

test("README.md's examples run as written", async (t) => {
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.ok(blocks.length >= 3, `found ${blocks.length} ts blocks`);
  const server = await startServer({ grpcWeb: true });
  t.after(() => server.stop());
  const dir = join(here, "readme");
  mkdirSync(dir, { recursive: true });
  for (const [i, block] of blocks.entries()) {
    assert.match(block, /http:\/\/localhost:(50051|8080)/, `block ${i + 1} names the server`);
    const source = block
      .replaceAll("http://localhost:50051", server.baseUrl)
      .replaceAll("http://localhost:8080", server.webUrl);
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const file = join(dir, `block-${i + 1}.mjs`);
    writeFileSync(file, js);
    await t.test(`block ${i + 1}`, async () => {
      await import(pathToFileURL(file).href);
    });
  }
  const client = server.client();
  const game = (await client.getGame({ gameId: "readme-client" })).game!;
  assert.deepEqual(game.moves, ["e2e4"]);
});
