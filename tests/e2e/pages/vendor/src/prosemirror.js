// ProseMirror with the basic schema (plus lists) and the example setup (keymaps, menu, history),
// as `window.PM` for the e2e pages.
import { EditorState } from "prosemirror-state";
import { EditorView } from "prosemirror-view";
import { DOMParser, Schema } from "prosemirror-model";
import { schema as basic } from "prosemirror-schema-basic";
import { addListNodes } from "prosemirror-schema-list";
import { exampleSetup } from "prosemirror-example-setup";

const schema = new Schema({
  nodes: addListNodes(basic.spec.nodes, "paragraph block*", "block"),
  marks: basic.spec.marks,
});

window.PM = { DOMParser, EditorState, EditorView, exampleSetup, schema };
