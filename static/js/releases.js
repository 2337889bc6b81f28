// Release pages: refresh a release when its build job ends, and move through the list by keyboard.
(function () {
  "use strict";
  const FINISHED = ".job.job-succeeded, .job.job-failed, .job.job-cancelled";

  // The job partial polls itself until the job ends; the release around it (status, counts,
  // download links) is then fetched once, instead of polling the release as well.
  document.addEventListener("htmx:afterSettle", () => {
    document.querySelectorAll("[data-release-row]").forEach((row) => {
      if (row.querySelector(FINISHED) && window.htmx) window.htmx.trigger(row, "job-finished");
    });
    const live = document.querySelector("[data-release-live]");
    if (live && live.querySelector(FINISHED)) window.location.reload();
  });

  // j / k mark the next / previous release in the list; o opens the marked one.
  let current = -1;
  function rows() {
    return Array.from(document.querySelectorAll("[data-release-row]"));
  }
  function mark(step) {
    const all = rows();
    if (!all.length) return;
    current = Math.max(0, Math.min(all.length - 1, current + step));
    all.forEach((row, i) => row.classList.toggle("marked", i === current));
    all[current].scrollIntoView({ block: "nearest" });
    const link = all[current].querySelector("[data-row-link]");
    if (link) link.focus();
  }
  if (window.VidQA && window.VidQA.shortcuts && document.querySelector("[data-release-list]")) {
    const keys = window.VidQA.shortcuts;
    keys.register("j", gettext("Mark the next release"), () => mark(1));
    keys.register("k", gettext("Mark the previous release"), () => mark(-1));
    keys.register("o", gettext("Open the marked release"), () => {
      const row = rows()[current];
      const link = row && row.querySelector("[data-row-link]");
      if (link) link.click();
    });
  }
})();
