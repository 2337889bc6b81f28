// Dashboards: number keys jump to a panel, "d" downloads the CSV of the panel you are in (the one
// holding the focus, else the one last jumped to, else the first on screen). Keys go through
// shortcuts.js, so "?" lists them.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});
  let current = null;

  function panels() {
    return Array.from(document.querySelectorAll("section.panel[data-csv]"));
  }

  function jump(n) {
    const panel = panels()[n - 1];
    if (!panel) return;
    current = panel;
    panel.scrollIntoView({ block: "start" });
    panel.focus({ preventScroll: true });
    history.replaceState(null, "", "#" + panel.id);
  }

  function focusedPanel() {
    const inside = document.activeElement && document.activeElement.closest("section.panel[data-csv]");
    if (inside) return inside;
    if (current) return current;
    return panels().find((p) => p.getBoundingClientRect().bottom > 0) || null;
  }

  function download() {
    const panel = focusedPanel();
    if (!panel) return;
    const link = document.createElement("a");
    link.href = panel.dataset.csv;
    link.download = "";
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  function start() {
    if (!VidQA.shortcuts) return;
    panels().forEach((panel, i) => {
      if (i < 9) {
        const title = panel.querySelector("h2").textContent.replace(/^\s*\d\s*/, "").trim();
        VidQA.shortcuts.register(String(i + 1), interpolate(gettext("Jump to %s"), [title]), () => jump(i + 1));
      }
      panel.addEventListener("focusin", () => { current = panel; });
    });
    VidQA.shortcuts.register("d", gettext("Download the CSV of the panel you are in"), download);
    VidQA.shortcuts.register("D", gettext("Download the CSV of the panel you are in"), download);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  VidQA.dashboard = { jump, download, focusedPanel };
})();
