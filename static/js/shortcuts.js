// Keyboard shortcuts: any element with data-key="x" is clicked (or focused, for inputs) when x is
// pressed outside a text field. "?" lists every shortcut on the page, so each screen documents itself.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  // Boxes and buttons take no text: a letter pressed on a ticked checkbox is still a shortcut, while
  // Space and Enter keep their own meaning there (tick, press).
  const KEYLESS_INPUTS = ["checkbox", "radio", "button", "submit", "reset", "file"];

  function typing(target, key) {
    const tag = target.tagName;
    if (tag === "INPUT" && KEYLESS_INPUTS.includes((target.type || "").toLowerCase())) {
      return key === " " || key === "Enter";
    }
    return target.isContentEditable || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  function keyName(event) {
    if (event.key === " ") return "Space";
    return (event.ctrlKey ? "Ctrl+" : "") + (event.altKey ? "Alt+" : "") + event.key;
  }

  function visible(el) {
    return !!(el.offsetParent || el.getClientRects().length);
  }

  function toggleHelp() {
    const dialog = document.getElementById("shortcut-help");
    if (!dialog) return;
    if (dialog.open) { dialog.close(); return; }
    const table = dialog.querySelector("table");
    table.replaceChildren();
    const seen = new Set();
    document.querySelectorAll("[data-key]").forEach((el) => {
      const key = el.dataset.key;
      if (seen.has(key)) return;
      seen.add(key);
      const row = table.insertRow();
      const k = document.createElement("kbd");
      k.textContent = key;
      row.insertCell().appendChild(k);
      row.insertCell().textContent = el.dataset.keyLabel || el.title || el.textContent.trim();
    });
    Object.entries(handlers).forEach(([key, h]) => {
      if (seen.has(key)) return;
      const row = table.insertRow();
      const k = document.createElement("kbd");
      k.textContent = key;
      row.insertCell().appendChild(k);
      row.insertCell().textContent = h.label;
    });
    dialog.showModal();
  }

  const handlers = {};  // widgets (player, editors) register key → function here

  function register(key, label, fn) {
    handlers[key] = { label, fn };
  }

  document.addEventListener("keydown", (event) => {
    if (typing(event.target, event.key) && event.key !== "Escape") return;
    const key = keyName(event);
    if (handlers[key]) {
      event.preventDefault();
      handlers[key].fn(event);
      return;
    }
    const el = Array.from(document.querySelectorAll(`[data-key="${CSS.escape(key)}"]`)).find(visible);
    if (!el) return;
    event.preventDefault();
    if (el.matches("input, textarea, select")) el.focus();
    else el.click();
  });

  VidQA.shortcuts = { toggleHelp, register, handlers };
})();
