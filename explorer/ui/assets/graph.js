// The graph viewer: a frame that may run scripts but has no origin (the picture's labels come
// from the learner's program), made once and kept: it loads the viewer page
// (explorer/ui/assets/viewer.html) once, and each new picture is posted to it, which is
// quicker than loading a page anew. A click on a node there sends the node's id here, and
// only an id: here it becomes the "node" trigger for Python.
const frames = new WeakMap();
const NODE_ID = /^[\w.[\]]{1,200}$/;  // as explorer/runner/validate.py checks node ids

export default function (component) {
  const { data, parentElement } = component;
  let state = frames.get(parentElement);
  if (!state) {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.className = "autograd-graph";
    frame.style.cssText = "width:100%;border:0;display:block";
    frame.srcdoc = data.viewer;
    parentElement.appendChild(frame);
    const heard = (event) => {
      if (event.source !== frame.contentWindow || !event.data) return;
      const node = event.data.node;
      if (event.data.ready === true) {
        state.ready = true;
        state.post();
      } else if (typeof node === "string" && NODE_ID.test(node)) {
        state.send("node", node);
      }
    };
    window.addEventListener("message", heard);
    state = { frame, heard, ready: false };
    state.post = () => state.frame.contentWindow.postMessage(
      { svg: state.data.svg, chosen: state.data.chosen }, "*");
    frames.set(parentElement, state);
  }
  state.send = component.setTriggerValue;
  state.data = data;
  state.frame.title = data.title;
  state.frame.style.height = typeof data.height === "number" ? `${data.height}px` : data.height;
  if (state.ready) state.post();
  return () => {  // unmounted: the frame and its listener go
    window.removeEventListener("message", state.heard);
    state.frame.remove();
    frames.delete(parentElement);
  };
}
