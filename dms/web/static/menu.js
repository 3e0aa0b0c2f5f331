// The user menu in the top bar (a menu button: Enter, Space or the arrows open it, the arrows
// move, Escape closes it) and the side bar's toggle on narrow screens.

import { $ } from "./dom.js";

const items = () => [...$("usermenu-list").querySelectorAll('[role="menuitem"]')];

function open(index) {
  $("usermenu-list").hidden = false;
  $("usermenu-button").setAttribute("aria-expanded", "true");
  const all = items();
  all[(index + all.length) % all.length].focus();
}

export function closeMenu(returnFocus = false) {
  if ($("usermenu-list").hidden) return;
  $("usermenu-list").hidden = true;
  $("usermenu-button").setAttribute("aria-expanded", "false");
  if (returnFocus) $("usermenu-button").focus();
}

/** `actions`: the menu items' data-action -> function. */
export function setUp(actions) {
  $("usermenu-button").addEventListener("click", () => {
    if ($("usermenu-list").hidden) open(0);
    else closeMenu();
  });
  $("usermenu-button").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      open(event.key === "ArrowDown" ? 0 : -1);
    }
  });
  $("usermenu-list").addEventListener("keydown", (event) => {
    const all = items();
    const index = all.indexOf(document.activeElement);
    const moves = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: all.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      all[(moves[event.key] + all.length) % all.length].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      closeMenu(true);
    } else if (event.key === "Tab") {
      closeMenu();
    }
  });
  for (const item of items()) {
    item.addEventListener("click", () => {
      closeMenu();
      actions[item.dataset.action]();
    });
  }
  // A click anywhere else closes the menu.
  document.addEventListener("click", (event) => {
    if (!$("usermenu").contains(event.target)) closeMenu();
  });

  // Narrow screens: the side bar is a panel the "Folders" button opens; following a link closes it.
  const toggle = $("sidebar-toggle");
  const setOpen = (opened) => {
    $("sidebar").classList.toggle("is-open", opened);
    toggle.setAttribute("aria-expanded", String(opened));
  };
  toggle.addEventListener("click", () => {
    const opening = !$("sidebar").classList.contains("is-open");
    setOpen(opening);
    if (opening) $("sidebar").querySelector("a")?.focus();
  });
  $("sidebar").addEventListener("click", (event) => {
    if (event.target.closest("a")) setOpen(false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && $("sidebar").classList.contains("is-open")) {
      setOpen(false);
      toggle.focus();
    }
  });
}
