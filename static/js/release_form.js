// The new-release form: Ctrl+Enter submits from inside a field too (the shortcut module ignores keys
// typed into fields), and f jumps to the formats.
(function () {
  "use strict";
  const form = document.getElementById("release-form");
  if (!form) return;
  form.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); form.requestSubmit(); }
  });
  VidQA.shortcuts.register("f", "Go to the formats", () => document.querySelector("#id_formats input")?.focus());
})();
