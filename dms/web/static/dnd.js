// Drag and drop: a folder's rows (the dragged one, or every selected one) dropped onto a folder
// (a row, the tree, a breadcrumb) are moved there; files from the desktop dropped onto a folder
// are uploaded into it. The keyboard's way to the same: the Move dialog and the Upload button.

const NODES = "application/x-dms-nodes";

let move = async () => {};
let upload = () => {};

/** `onMove(ids, folderId)` and `onFiles(files, folderId)` do the work. */
export function setUp({ onMove, onFiles }) {
  move = onMove;
  upload = onFiles;
}

/** Makes `element` draggable; `ids()` says which nodes go with it, `label` what is dragged. */
export function draggable(element, ids, label) {
  element.draggable = true;
  element.addEventListener("dragstart", (event) => {
    event.dataTransfer.setData(NODES, JSON.stringify(ids()));
    event.dataTransfer.setData("text/plain", label());
    event.dataTransfer.effectAllowed = "move";
    element.classList.add("is-dragged");
  });
  element.addEventListener("dragend", () => element.classList.remove("is-dragged"));
}

export const carries = (event, type) => [...(event.dataTransfer?.types ?? [])].includes(type);

/** Makes `element` a place to drop nodes (moved into `folderId`) and files (uploaded there). */
export function dropTarget(element, folderId) {
  element.addEventListener("dragover", (event) => {
    const nodes = carries(event, NODES);
    if (!nodes && !carries(event, "Files")) return;
    event.preventDefault();
    event.stopPropagation();
    event.dataTransfer.dropEffect = nodes ? "move" : "copy";
    element.classList.add("is-drop-target");
  });
  element.addEventListener("dragleave", (event) => {
    if (!element.contains(event.relatedTarget)) element.classList.remove("is-drop-target");
  });
  element.addEventListener("drop", (event) => {
    element.classList.remove("is-drop-target");
    if (carries(event, NODES)) {
      event.preventDefault();
      event.stopPropagation();
      const ids = JSON.parse(event.dataTransfer.getData(NODES) || "[]").filter((node) => node !== folderId);
      if (ids.length) move(ids, folderId);
    } else if (event.dataTransfer.files.length) {
      event.preventDefault();
      event.stopPropagation();
      upload([...event.dataTransfer.files], folderId);
    }
  });
}
