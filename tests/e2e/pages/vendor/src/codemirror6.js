// CodeMirror 6 with its basic setup and the SQL language, as `window.CM6` for the e2e pages.
import { basicSetup, EditorView } from "codemirror";
import { sql } from "@codemirror/lang-sql";

window.CM6 = { basicSetup, EditorView, sql };
