// The program editor: CodeMirror 6 for a Streamlit (v2) component.
//
// This bundle is a library. A page mounts it as an element of its own that draws nothing
// (explorer/ui/code_editor.py): that element's message is the same at every rerun, so
// Streamlit sends a tab its 370 KB once and then only its hash. It hands `mount` to the
// editor component (explorer/ui/assets/editor-mount.js), which calls it with its own.
//
// Python sends `data`: {code, label, step, calling, error: {line, message} | null, focus}
// (`step`: the first and last line of the step shown; `calling`: the lines of the calls that
// led to it, marked lighter); the editor
// sends back state `code` (on blur and on Ctrl/Cmd+Enter) and the trigger `run` (the code, on
// Ctrl/Cmd+Enter). The program text is only ever text here: never HTML.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, indentUnit, syntaxHighlighting, defaultHighlightStyle } from "@codemirror/language";
import { EditorState, StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
import {
  Decoration, EditorView, WidgetType, drawSelection, highlightActiveLine, keymap, lineNumbers,
} from "@codemirror/view";

const marks = StateEffect.define();  // {step, calling, error}: lines to mark

class Message extends WidgetType {
  constructor(text) { super(); this.text = text; }
  eq(other) { return other.text === this.text; }
  toDOM() {
    const note = document.createElement("div");
    note.className = "cm-error-message";
    note.textContent = this.text;  // text, never HTML
    return note;
  }
}

const marked = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    for (const effect of tr.effects) {
      if (effect.is(marks)) return decorations(tr.state.doc, effect.value);
    }
    return tr.docChanged ? Decoration.none : value;  // an edit makes old marks stale
  },
  provide: (field) => EditorView.decorations.from(field),
});

function decorations(doc, { step, calling, error }) {
  const found = [];
  const line = (number) => (number >= 1 && number <= doc.lines ? doc.line(number) : null);
  for (const n of new Set(calling ?? [])) {
    const at = line(n);
    if (at) found.push([at.from, 0, Decoration.line({ class: "cm-call-line" })]);
  }
  for (let n = step?.[0] ?? 0; step && n <= step[1]; n++) {
    const at = line(n);
    if (at) found.push([at.from, 0, Decoration.line({ class: "cm-step-line" })]);
  }
  const bad = error && line(error.line);
  if (bad) {
    found.push([bad.from, 1, Decoration.line({ class: "cm-error-line" })]);
    found.push([bad.to, 2, Decoration.widget({ widget: new Message(error.message), side: 1,
                                               block: true })]);
  }
  found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const builder = new RangeSetBuilder();
  for (const [at, , decoration] of found) builder.add(at, at, decoration);
  return builder.finish();
}

const views = new WeakMap();

function mount(component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  let view = views.get(parentElement);
  if (!view) {
    const send = () => setStateValue("code", view.state.doc.toString());
    const run = () => {
      send();
      setTriggerValue("run", view.state.doc.toString());
      return true;
    };
    view = new EditorView({
      parent: parentElement.querySelector(".editor") ?? parentElement,
      state: EditorState.create({
        doc: data.code,
        extensions: [
          lineNumbers(), history(), drawSelection(), highlightActiveLine(), bracketMatching(),
          indentUnit.of("    "), python(), syntaxHighlighting(defaultHighlightStyle),
          keymap.of([{ key: "Mod-Enter", run, preventDefault: true }, indentWithTab,
                     ...defaultKeymap, ...historyKeymap]),
          marked,
          EditorView.domEventHandlers({ blur: () => { send(); return false; } }),
          EditorView.contentAttributes.of({ "aria-label": data.label, role: "textbox",
                                            "aria-multiline": "true" }),
        ],
      }),
    });
    view.sent = data.code;
    views.set(parentElement, view);
  }
  if (data.code !== view.sent) {  // a new program from Python (a preset, a link): replace
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: data.code } });
    view.sent = data.code;
  }
  view.dispatch({ effects: marks.of({ step: data.step, calling: data.calling,
                                      error: data.error }) });
  if (data.step) {
    const line = view.state.doc.line(Math.min(Math.max(data.step[0], 1), view.state.doc.lines));
    view.dispatch({ effects: EditorView.scrollIntoView(line.from, { y: "nearest" }) });
  }
}

const editor = (globalThis.autogradExplorerEditor ??= {});  // as editor-mount.js makes it
editor.ready ??= new Promise((resolve) => { editor.define = resolve; });
editor.define(mount);

export default function () {}  // the library's own element draws nothing
