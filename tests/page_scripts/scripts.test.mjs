// Unit tests of the pure functions among Tabrelay's in-page scripts
// (desktop/tabrelay/tools/scripts/*.js), under `node --test` (make test runs them). A script
// file is one function expression (or a statement defining one), as the page runs it; here it
// is read from its file and called with stand-ins for the few DOM parts it touches. The scripts
// as a whole run in real Chromium in tests/e2e.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

const SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), "../../desktop/tabrelay/tools/scripts");

/** The function a script file is (an expression), or the one it defines (`defines`). */
function load(name, defines = null) {
  const source = readFileSync(join(SCRIPTS, name), "utf8");
  return defines ? new Function(`${source}\nreturn ${defines};`)() : new Function(`return (${source});`)();
}

test("generated text: a quoted string, or its alternative text, unescaped", () => {
  const spoken = load("generated_text.js");
  assert.equal(spoken('"Note: "'), "Note: ");
  assert.equal(spoken('"★" / "Favourite"'), "Favourite");
  assert.equal(spoken('"say \\"hi\\""'), 'say "hi"');
  assert.equal(spoken('"a\\\\b"'), "a\\b");
});

test("generated text: nothing for none, normal, counters, images and icon glyphs", () => {
  const spoken = load("generated_text.js");
  for (const content of ["", "none", "normal", "counter(item)", 'url("a.png")', '"\uE001"', '" \uF101 "', "attr(title)"]) {
    assert.equal(spoken(content), "", content);
  }
  assert.equal(spoken('"\uE001" / "Search"'), "Search"); // an icon with its words
  assert.equal(spoken('"unterminated'), "");
});

/** An element as field_kind.js reads one. */
function field({ type = "text", autocomplete = "", security = "none", nodeType = 1 } = {}) {
  return { nodeType, type, security, getAttribute: (name) => (name === "autocomplete" ? autocomplete : null) };
}

test("field kind: passwords, one-time codes and card details, told by type, autocomplete and dots", (t) => {
  globalThis.getComputedStyle = (el) => ({ webkitTextSecurity: el.security });
  t.after(() => delete globalThis.getComputedStyle);
  const kindOf = load("field_kind.js");
  assert.equal(kindOf(field({ type: "password" })), "password");
  assert.equal(kindOf(field({ type: "PASSWORD" })), "password");
  assert.equal(kindOf(field({ security: "disc" })), "password"); // drawn as dots
  assert.equal(kindOf(field({ autocomplete: "section-a current-password" })), "password");
  assert.equal(kindOf(field({ autocomplete: "new-password" })), "password");
  assert.equal(kindOf(field({ autocomplete: "One-Time-Code" })), "one-time code");
  assert.equal(kindOf(field({ autocomplete: "billing cc-number" })), "card detail");
  assert.equal(kindOf(field({ autocomplete: "email" })), null);
  assert.equal(kindOf(field()), null);
  assert.equal(kindOf(field({ nodeType: 3 })), null);
  assert.equal(kindOf(null), null);
});

/** A node with children, as each_root.js and query.js walk them (querySelectorAll('*')). */
function node(name, children = [], extra = {}) {
  const self = { name, tagName: extra.tagName ?? "DIV", children, ...extra };
  const all = () => children.flatMap((child) => [child, ...child.all()]);
  return Object.assign(self, {
    all,
    querySelectorAll: () => all(),
    querySelector: (selector) => all().find((el) => el.name === selector) ?? null,
  });
}

test("each root: the document, its shadow roots (nested too) and same-origin frames, not others", () => {
  const eachRoot = load("each_root.js", "eachRoot");
  const inner = node("inner root", [node("button")]);
  const shadow = node("shadow root", [node("x-inner", [], { shadowRoot: inner })]);
  const frameDoc = node("frame document", [node("p")]);
  const foreign = node("iframe", [], { tagName: "IFRAME" });
  Object.defineProperty(foreign, "contentDocument", { get() { throw new Error("cross-origin"); } });
  const page = node("document", [
    node("x-host", [], { shadowRoot: shadow }),
    node("frame", [], { tagName: "IFRAME", contentDocument: frameDoc }),
    foreign,
  ]);
  const visited = [];
  eachRoot(page, (root) => visited.push(root.name));
  assert.deepEqual(visited, ["document", "shadow root", "inner root", "frame document"]);
});

test("query: the first element a selector names, looked for in shadow roots too", (t) => {
  const hidden = node("#pay", []);
  globalThis.document = node("document", [node("a"), node("x-card", [], { shadowRoot: node("root", [hidden]) })]);
  t.after(() => delete globalThis.document);
  const query = load("query.js");
  assert.equal(query("#pay"), hidden);
  assert.equal(query("a").name, "a");
  assert.equal(query("#none"), null);
});

/** A tree (a document, a shadow root) whose labels are set later; it counts its looks. */
function tree() {
  return {
    labels: [],
    looks: 0,
    querySelectorAll(selector) {
      assert.equal(selector, "label");
      this.looks++;
      return this.labels;
    },
  };
}

test("labels of: a field's labels in tree order, each tree looked through once", () => {
  const [doc, shadow] = [tree(), tree()];
  const field = (root) => ({ getRootNode: () => root });
  const [name, email, unlabelled, inShadow] = [field(doc), field(doc), field(doc), field(shadow)];
  const label = (control) => ({ control });
  const [first, second, third, own] = [label(name), label(email), label(name), label(inShadow)];
  doc.labels = [first, second, label(null), third]; // one names no field (its for= is wrong)
  shadow.labels = [own];
  const labelsOf = load("labels_of.js")();
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(labelsOf(name), [first, third]);
    assert.deepEqual(labelsOf(email), [second]);
    assert.deepEqual(labelsOf(unlabelled), []);
    assert.deepEqual(labelsOf(inShadow), [own]);
  }
  assert.deepEqual([doc.looks, shadow.looks], [1, 1]);
  load("labels_of.js")()(name); // another read looks again: the page may have changed since
  assert.equal(doc.looks, 2);
});
