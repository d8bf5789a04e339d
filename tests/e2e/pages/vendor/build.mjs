// Bundles the editors that ship no browser build (CodeMirror 6, ProseMirror) into build/,
// one IIFE each that sets a global; CodeMirror 5 and Monaco are served from node_modules as
// they ship. Run by `make test` after `npm ci`; needs no network.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const here = new URL(".", import.meta.url).pathname;
mkdirSync(`${here}build`, { recursive: true });
for (const name of ["codemirror6", "prosemirror"]) {
  await build({
    entryPoints: [`${here}src/${name}.js`],
    outfile: `${here}build/${name}.js`,
    bundle: true,
    format: "iife",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
}
for (const css of ["prosemirror-view/style/prosemirror.css", "prosemirror-menu/style/menu.css",
  "prosemirror-example-setup/style/style.css"]) {
  copyFileSync(`${here}node_modules/${css}`, `${here}build/${css.split("/")[0]}.css`);
}
