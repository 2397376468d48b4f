// The graph viewer: graphviz's SVG in a frame that may run scripts but has no origin (its
// labels come from the learner's program), with pan and zoom there. A click on a node there
// sends the node's id here, and only an id: here it becomes the "node" trigger for Python.
const frames = new WeakMap();
const NODE_ID = /^[\w.[\]]{1,200}$/;  // as explorer/runner/validate.py checks node ids

export default function (component) {
  const { data, parentElement } = component;
  let state = frames.get(parentElement);
  if (!state) {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.title = data.title;
    frame.className = "autograd-graph";
    frame.style.cssText = "width:100%;border:0;display:block";
    parentElement.appendChild(frame);
    const heard = (event) => {
      const node = event.data && event.data.node;
      if (event.source === frame.contentWindow && typeof node === "string"
          && NODE_ID.test(node)) {
        state.send("node", node);
      }
    };
    window.addEventListener("message", heard);
    state = { frame, page: null, heard };
    frames.set(parentElement, state);
  }
  state.send = component.setTriggerValue;
  state.frame.style.height = `${data.height}px`;
  if (state.page !== data.page) {
    state.frame.srcdoc = data.page;
    state.page = data.page;
  }
  return () => {  // unmounted: the frame and its listener go
    window.removeEventListener("message", state.heard);
    state.frame.remove();
    frames.delete(parentElement);
  };
}
