// The program editor's component: it waits for the editor's library (assets/editor.js,
// mounted beside it as an element of its own, sent to a tab once) and mounts the editor.
const editor = (globalThis.autogradExplorerEditor ??= {});  // as editor.js makes it
editor.ready ??= new Promise((resolve) => { editor.define = resolve; });

export default (component) => editor.ready.then((mount) => mount(component));
