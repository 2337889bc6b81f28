// The timeline under the player: clips (click to jump, the current one highlighted), scene
// boundaries, a comment-density strip and the playhead; clicking the bar elsewhere seeks there.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function el(tag, className, attrs) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }

  function attach(player) {
    const box = document.getElementById("player-timeline");
    if (!box) return null;
    let buttons = [];
    let playhead = null;
    let current = null;
    const note = box.querySelector(".empty"); // "no clips yet", kept under the bar

    function render() {
      const d = player.duration;
      if (!d) return; // before metadata and without a probe there is nothing to scale by
      const pct = (t) => (Math.min(Math.max(t, 0), d) / d) * 100 + "%";
      const track = el("div", "timeline-track", { title: gettext("Click to jump to that moment") });

      if (player.density && player.density.counts.length) {
        const strip = el("div", "timeline-density", { "aria-hidden": "true" });
        const max = Math.max(...player.density.counts);
        const width = player.density.bin_s;
        player.density.counts.forEach((n, i) => {
          const bar = el("span", "", { title: interpolate(ngettext("%(n)s comment at %(from)s–%(to)s", "%(n)s comments at %(from)s–%(to)s", n), { n: n, from: player.clock(i * width), to: player.clock((i + 1) * width) }, true) });
          bar.style.height = (max ? (n / max) * 100 : 0) + "%";
          strip.append(bar);
        });
        track.append(strip);
      }

      const lanes = el("div", "timeline-clips");
      buttons = player.clips.map((clip, i) => {
        const label = gettext("Clip ") + clip.index + ", " + player.clock(clip.start) + " – " + player.clock(clip.end);
        const b = el("button", "timeline-clip lane-" + (i % 2), { type: "button", title: label, "aria-label": label });
        b.dataset.start = clip.start;
        b.dataset.index = clip.index;
        b.style.left = pct(clip.start);
        b.style.width = `calc(${pct(clip.end)} - ${pct(clip.start)})`;
        b.textContent = clip.index;
        b.addEventListener("click", (event) => { event.stopPropagation(); player.seek(clip.start); });
        lanes.append(b);
        return b;
      });
      track.append(lanes);

      player.scenes.forEach(([start], i) => {
        if (start <= 0) return;
        const tick = el("span", "timeline-scene", { title: gettext("Scene ") + (i + 1) + gettext(" starts at ") + player.clock(start) });
        tick.style.left = pct(start);
        track.append(tick);
      });

      playhead = el("span", "timeline-playhead", { "aria-hidden": "true" });
      track.append(playhead);
      track.addEventListener("click", (event) => {
        const rect = track.getBoundingClientRect();
        player.seek(((event.clientX - rect.left) / rect.width) * d);
      });
      box.replaceChildren(...(note ? [track, note] : [track]));
      current = null;
      update(player.currentTime);
    }

    function update(t) {
      if (!playhead) return;
      const d = player.duration;
      playhead.style.left = (d ? (Math.min(t, d) / d) * 100 : 0) + "%";
      const clip = player.currentClip();
      const i = clip ? player.clips.indexOf(clip) : -1;
      if (i === current) return;
      if (current != null && current >= 0) { buttons[current].classList.remove("current"); buttons[current].removeAttribute("aria-current"); }
      current = i;
      if (i >= 0) { buttons[i].classList.add("current"); buttons[i].setAttribute("aria-current", "true"); }
    }

    render();
    // A probe may be missing or differ slightly from what the browser decodes: rescale once known.
    player.video.addEventListener("loadedmetadata", render);
    player.onTimeUpdate((t) => update(t));
    return { render };
  }

  function start() {
    if (VidQA.player) VidQA.timeline = attach(VidQA.player);
  }
  if (VidQA.player) start();
  else document.addEventListener("vidqa:player-ready", start, { once: true });
})();
