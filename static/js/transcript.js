// The transcript beside the player: the line being spoken is highlighted and kept in view while
// the video plays, a click on a line seeks to its start, and "/" searches the lines.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});
  const EPS = 1e-3;
  const HANDS_OFF_MS = 4000; // after the reader scrolls the panel, leave it where they put it

  function attach(player) {
    const list = document.getElementById("transcript-lines");
    if (!list) return null;
    const lines = Array.from(list.querySelectorAll("li[data-start]"));
    const starts = lines.map((li) => parseFloat(li.dataset.start));
    const ends = lines.map((li) => parseFloat(li.dataset.end));
    const texts = lines.map((li) => li.textContent.toLowerCase());
    let active = -1;
    let userScrolledAt = -Infinity;

    // Cues are in start order; the active one is the latest started that has not ended.
    function activeIndex(t) {
      let lo = 0, hi = starts.length - 1, found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid] <= t + EPS) { found = mid; lo = mid + 1; } else hi = mid - 1;
      }
      // Overlapping cues are rare and short: a few steps back find a longer earlier one.
      for (let i = found; i >= 0 && i > found - 8; i--) {
        if (t < ends[i] || (starts[i] === ends[i] && Math.abs(t - starts[i]) <= EPS)) return i;
      }
      return -1;
    }

    function keepInView(li) {
      if (performance.now() - userScrolledAt < HANDS_OFF_MS) return;
      // Scroll the panel only: scrollIntoView would also move the page under the reader.
      const top = li.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 3);
      }
    }

    function highlight(t) {
      const i = activeIndex(t);
      if (i === active) return;
      if (active >= 0) { lines[active].classList.remove("active"); lines[active].removeAttribute("aria-current"); }
      active = i;
      if (i < 0) return;
      lines[i].classList.add("active");
      lines[i].setAttribute("aria-current", "true");
      if (!player.paused) keepInView(lines[i]);
    }

    list.addEventListener("click", (event) => {
      const li = event.target.closest("li[data-start]");
      if (li) player.seek(parseFloat(li.dataset.start));
    });
    ["wheel", "touchmove"].forEach((name) =>
      list.addEventListener(name, () => { userScrolledAt = performance.now(); }, { passive: true }));

    const search = document.getElementById("transcript-search");
    const noMatch = document.getElementById("transcript-nomatch");
    function filter() {
      const q = search.value.trim().toLowerCase();
      let shown = 0;
      lines.forEach((li, i) => {
        const hit = !q || texts[i].includes(q);
        li.hidden = !hit;
        if (hit) shown++;
      });
      noMatch.hidden = shown > 0;
    }
    if (search) {
      search.addEventListener("input", filter);
      search.addEventListener("keydown", (event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          search.value = "";
          filter();
          search.blur();
        } else if (event.key === "Enter") {
          // Enter jumps to the first match after the playhead (or the first at all).
          event.preventDefault();
          const visible = lines.filter((li) => !li.hidden);
          const next = visible.find((li) => parseFloat(li.dataset.start) > player.currentTime + EPS) || visible[0];
          if (next) player.seek(parseFloat(next.dataset.start));
        }
      });
      if (VidQA.shortcuts) {
        VidQA.shortcuts.register("/", gettext("Search the transcript"), () => { search.focus(); search.select(); });
      }
    }

    player.onTimeUpdate((t) => highlight(t));
    return { activeLine: () => (active >= 0 ? lines[active] : null), filter };
  }

  function start() {
    if (VidQA.player) VidQA.transcript = attach(VidQA.player);
  }
  if (VidQA.player) start();
  else document.addEventListener("vidqa:player-ready", start, { once: true });
})();
