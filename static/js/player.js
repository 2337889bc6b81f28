// The video player every screen builds on: keys, frame-exact stepping, clips, marks and the
// comments of the current moment. Editors talk to it through window.VidQA.player:
//   VidQA.player.currentTime            seconds (read-only; use seek)
//   VidQA.player.seek(t)                jump to t seconds (clamped to the video)
//   VidQA.player.frameAt(t)             frame index round(t * fps), or null when fps is unknown
//   VidQA.player.play() / pause() / toggle()
//   VidQA.player.onTimeUpdate(cb)       cb(t, frame) on every position change; returns unsubscribe
//   VidQA.player.clips / scenes / fps / duration / video / marks() / mark()
// document receives "vidqa:mark" CustomEvents ({time, frame, videoId}) when the user marks a moment.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  const SEEK_STEP_S = 5;
  const EPS = 1e-3; // a position this close to a start counts as at it (float round trips)
  const COMMENTS_BEFORE_S = 5;
  const COMMENTS_AFTER_S = 5;
  const COMMENTS_MIN_INTERVAL_MS = 500; // at most ~2 requests a second while playing

  function clock(seconds) {
    if (seconds == null || !Number.isFinite(seconds)) return "—";
    let ms = Math.round(Math.max(0, seconds) * 1000);
    const h = Math.floor(ms / 3600000); ms -= h * 3600000;
    const m = Math.floor(ms / 60000); ms -= m * 60000;
    const s = Math.floor(ms / 1000); ms -= s * 1000;
    const pad = (n, w) => String(n).padStart(w, "0");
    return (h ? h + ":" + pad(m, 2) : pad(m, 2)) + ":" + pad(s, 2) + "." + pad(ms, 3);
  }

  // Python's round(): the server (Video.frame_index, release positions) must name the same frame.
  function roundHalfEven(x) {
    const floor = Math.floor(x);
    const diff = x - floor;
    if (diff !== 0.5) return Math.round(x);
    return floor % 2 === 0 ? floor : floor + 1;
  }

  function createPlayer(root) {
    const config = JSON.parse(document.getElementById(root.dataset.config).textContent);
    const video = root.querySelector("video");
    const fps = config.fps || null;
    const stepFps = fps || 25; // without a probe, step by a common frame length
    const clips = config.clips.slice().sort((a, b) => a.start - b.start || a.index - b.index);
    const listeners = new Set();
    const $ = (sel) => root.querySelector(sel);

    function duration() {
      return Number.isFinite(video.duration) && video.duration > 0 ? video.duration : config.duration || 0;
    }
    function clamp(t) {
      const d = duration();
      return Math.max(0, d ? Math.min(t, d) : t);
    }
    function frameAt(t) {
      return fps ? roundHalfEven(t * fps) : null;
    }

    // --- position changes fan out to the widgets (time readout, transcript, timeline, editors)
    let lastNotified = null;
    function notify(force) {
      const t = video.currentTime;
      if (!force && t === lastNotified) return;
      lastNotified = t;
      const frame = frameAt(t);
      listeners.forEach((cb) => {
        try { cb(t, frame); } catch (err) { console.error(err); }
      });
    }
    function onTimeUpdate(cb) {
      listeners.add(cb);
      cb(video.currentTime, frameAt(video.currentTime));
      return () => listeners.delete(cb);
    }
    // timeupdate fires only ~4 times a second: follow the picture while it plays.
    function tick() {
      notify(false);
      if (!video.paused && !video.ended) requestAnimationFrame(tick);
    }
    video.addEventListener("play", () => requestAnimationFrame(tick));
    ["timeupdate", "seeking", "seeked", "loadedmetadata", "pause", "ended"].forEach((name) =>
      video.addEventListener(name, () => notify(true)));

    function seek(t) {
      video.currentTime = clamp(t);
      notify(true);
    }
    function play() { return video.play().catch(() => {}); }
    function pause() { video.pause(); }
    function toggle() { if (video.paused || video.ended) play(); else pause(); }
    function stepFrames(n) {
      pause();
      // Step from the frame on screen (the one that started at or before now), landing on exact
      // frame starts; the epsilon absorbs k / fps * fps coming back as k - 1e-12.
      const frame = Math.floor(video.currentTime * stepFps + EPS);
      seek(Math.max(0, frame + n) / stepFps);
    }

    // --- clips: the current one is the latest that has started (padded clips overlap)
    function currentClipIndex(t) {
      let found = -1;
      for (let i = 0; i < clips.length && clips[i].start <= t + EPS; i++) {
        if (t < clips[i].end) found = i;
      }
      return found;
    }
    function nextClip() {
      const t = video.currentTime;
      const i = currentClipIndex(t);
      const target = i >= 0 ? clips[i + 1] : clips.find((c) => c.start > t + EPS);
      if (target) seek(target.start);
    }
    function prevClip() {
      const t = video.currentTime;
      const i = currentClipIndex(t);
      let target;
      if (i >= 0) target = clips[Math.max(0, i - 1)];
      else for (const c of clips) if (c.start < t - EPS) target = c;
      if (target) seek(target.start);
    }

    // --- marks: kept per video for the tab's life, so a reload keeps them
    const marksKey = "vidqa:marks:" + config.videoId;
    let marks = [];
    try { marks = JSON.parse(sessionStorage.getItem(marksKey) || "[]"); } catch (err) { marks = []; }
    function saveMarks() {
      try { sessionStorage.setItem(marksKey, JSON.stringify(marks)); } catch (err) { /* storage full or off: the list still shows */ }
      renderMarks();
    }
    function mark() {
      const t = Math.round(video.currentTime * 1000) / 1000;
      const entry = { time: t, frame: frameAt(video.currentTime) };
      marks.push(entry);
      marks.sort((a, b) => a.time - b.time);
      saveMarks();
      document.dispatchEvent(new CustomEvent("vidqa:mark", { detail: { ...entry, videoId: config.videoId } }));
      return entry;
    }
    function renderMarks() {
      const list = $("#marks-list");
      if (!list) return;
      list.replaceChildren(...marks.map((m, i) => {
        const li = document.createElement("li");
        li.dataset.time = m.time;
        li.dataset.frame = m.frame == null ? "" : m.frame;
        const go = document.createElement("button");
        go.type = "button";
        go.className = "link mark-seek";
        go.textContent = clock(m.time) + (m.frame == null ? "" : gettext(" · frame ") + m.frame);
        go.addEventListener("click", () => seek(m.time));
        const drop = document.createElement("button");
        drop.type = "button";
        drop.className = "link mark-remove";
        drop.textContent = "×";
        drop.setAttribute("aria-label", gettext("Remove the mark at ") + clock(m.time));
        drop.addEventListener("click", () => { marks.splice(i, 1); saveMarks(); });
        li.append(go, " ", drop);
        return li;
      }));
      const empty = $("#marks-empty");
      if (empty) empty.hidden = marks.length > 0;
      const clear = $("#marks-clear");
      if (clear) clear.hidden = marks.length === 0;
    }
    const clearButton = $("#marks-clear");
    if (clearButton) clearButton.addEventListener("click", () => { marks = []; saveMarks(); });
    renderMarks();

    // --- time readout and play button
    const timeOut = $("#player-time");
    const frameOut = $("#player-frame");
    const clipOut = $("#player-clip");
    const durationOut = $("#player-duration");
    const toggleButton = root.querySelector('[data-action="toggle"]');
    onTimeUpdate((t, frame) => {
      timeOut.textContent = clock(t);
      if (frame != null) frameOut.textContent = frame;
      const i = currentClipIndex(t);
      clipOut.textContent = i >= 0 ? gettext("· clip ") + clips[i].index : "";
    });
    video.addEventListener("loadedmetadata", () => { durationOut.textContent = clock(duration()); });
    const syncButton = () => { toggleButton.textContent = video.paused ? gettext("Play") : gettext("Pause"); };
    video.addEventListener("play", syncButton);
    video.addEventListener("pause", syncButton);

    video.addEventListener("error", () => {
      const box = $("#player-error");
      const codes = { 1: gettext("loading was aborted"), 2: gettext("a network error"), 3: gettext("the file could not be decoded"), 4: gettext("this browser cannot play the file's format") };
      const why = (video.error && codes[video.error.code]) || gettext("an unknown error");
      box.textContent = interpolate(gettext("The video cannot play: %s. Transcript, clips and comments still work."), [why]);
      box.hidden = false;
    });

    // --- comments of the current moment, fetched lazily: throttled while playing, at once after a seek
    const commentsList = $("#comments-list");
    let lastRequestAt = -Infinity;
    let trailing = null;
    let inflight = null;
    let requestedKey = null; // the window shown or on its way: asking again would change nothing
    function requestComments(immediate) {
      if (!commentsList) return; // the video has no comments at all
      const wait = immediate ? 0 : lastRequestAt + COMMENTS_MIN_INTERVAL_MS - performance.now();
      if (wait > 0) {
        if (!trailing) trailing = setTimeout(() => { trailing = null; requestComments(true); }, wait);
        return;
      }
      if (trailing) { clearTimeout(trailing); trailing = null; }
      const t = video.currentTime;
      const start = Math.max(0, Math.round((t - COMMENTS_BEFORE_S) * 1000) / 1000);
      const end = Math.round((t + COMMENTS_AFTER_S) * 1000) / 1000;
      const key = start + "-" + end;
      if (key === requestedKey) return;
      requestedKey = key;
      lastRequestAt = performance.now();
      if (inflight) inflight.abort();
      const controller = (inflight = new AbortController());
      const url = config.commentsUrl + "?start=" + start + "&end=" + end;
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, signal: controller.signal })
        .then((r) => r.json().then((body) => {
          if (!r.ok) throw new Error(body.error || gettext("HTTP ") + r.status);
          return body;
        }))
        .then(renderComments)
        .catch((err) => {
          if (err.name === "AbortError") return;
          renderCommentsError(err.message);
        })
        .finally(() => { if (inflight === controller) inflight = null; });
    }
    function renderComments(body) {
      const panel = $("#comments-panel");
      panel.dataset.start = body.start;
      panel.dataset.end = body.end;
      $("#comments-window").textContent = clock(body.start) + " – " + clock(body.end);
      commentsList.replaceChildren(...body.comments.map((c) => {
        const li = document.createElement("li");
        li.dataset.id = c.id;
        li.dataset.time = c.time_s;
        const at = document.createElement("button");
        at.type = "button";
        at.className = "link comment-time";
        at.textContent = clock(c.time_s);
        at.addEventListener("click", () => seek(c.time_s));
        const who = document.createElement("span");
        who.className = "comment-user";
        who.textContent = c.user || "";
        const text = document.createElement("span");
        text.className = "comment-text";
        text.textContent = c.text;
        li.append(at, " ", who, who.textContent ? " " : "", text);
        return li;
      }));
      $("#comments-empty").hidden = body.comments.length > 0;
      $("#comments-empty").textContent = gettext("No comments at this moment.");
      $("#comments-more").hidden = !body.truncated;
    }
    function renderCommentsError(message) {
      requestedKey = null; // the next position change tries again
      commentsList.replaceChildren();
      const empty = $("#comments-empty");
      empty.hidden = false;
      empty.textContent = gettext("Comments could not be loaded: ") + message;
    }
    video.addEventListener("seeked", () => requestComments(true));
    video.addEventListener("loadedmetadata", () => requestComments(true));
    onTimeUpdate(() => { if (!video.paused) requestComments(false); });
    requestComments(true);

    // --- buttons and keys (the same functions; every key is listed by "?" and the legend)
    const actions = {
      toggle: toggle,
      back: () => seek(video.currentTime - SEEK_STEP_S),
      forward: () => seek(video.currentTime + SEEK_STEP_S),
      "frame-back": () => stepFrames(-1),
      "frame-forward": () => stepFrames(1),
      "prev-clip": prevClip,
      "next-clip": nextClip,
      mark: mark,
    };
    root.querySelectorAll("[data-action]").forEach((button) => {
      button.addEventListener("click", () => actions[button.dataset.action]());
    });
    if (VidQA.shortcuts) {
      const keys = [
        ["Space", "Play / pause", "toggle"],
        ["ArrowLeft", gettext("Back 5 seconds"), "back"],
        ["ArrowRight", gettext("Forward 5 seconds"), "forward"],
        [",", gettext("One frame back (pauses)"), "frame-back"],
        [".", gettext("One frame forward (pauses)"), "frame-forward"],
        ["[", gettext("Previous clip"), "prev-clip"],
        ["]", gettext("Next clip"), "next-clip"],
        ["m", gettext("Mark the current time"), "mark"],
      ];
      keys.forEach(([key, label, action]) => VidQA.shortcuts.register(key, label, actions[action]));
      // When the <video> has focus (after a click on it), Chrome's native controls handle keys in
      // a listener of their own before the event reaches the document, and again on keyup: Space
      // would toggle twice. Keys aimed at the video are taken in the capture phase and given to
      // the shortcut alone.
      const ours = new Set(keys.map(([key]) => key));
      const keyOf = (event) => (event.key === " " ? "Space" : event.key);
      const plain = (event) => !event.ctrlKey && !event.altKey && !event.metaKey;
      document.addEventListener("keydown", (event) => {
        if (event.target !== video || !plain(event) || !ours.has(keyOf(event))) return;
        event.preventDefault();
        event.stopPropagation();
        VidQA.shortcuts.handlers[keyOf(event)].fn(event);
      }, true);
      document.addEventListener("keyup", (event) => {
        if (event.target === video && plain(event) && ours.has(keyOf(event))) {
          event.preventDefault();
          event.stopPropagation();
        }
      }, true);
    }

    return {
      root: root,
      video: video,
      get currentTime() { return video.currentTime; },
      get duration() { return duration(); },
      get paused() { return video.paused; },
      fps: fps,
      clips: clips,
      scenes: config.scenes || [],
      density: config.density,
      videoId: config.videoId,
      seek: seek,
      frameAt: frameAt,
      timeAtFrame: (frame) => frame / stepFps,
      play: play,
      pause: pause,
      toggle: toggle,
      stepFrames: stepFrames,
      nextClip: nextClip,
      prevClip: prevClip,
      currentClip: () => { const i = currentClipIndex(video.currentTime); return i >= 0 ? clips[i] : null; },
      onTimeUpdate: onTimeUpdate,
      mark: mark,
      marks: () => marks.slice(),
      clock: clock,
    };
  }

  function init() {
    const root = document.querySelector("[data-player]");
    if (!root || VidQA.player) return;
    VidQA.player = createPlayer(root);
    document.dispatchEvent(new CustomEvent("vidqa:player-ready", { detail: VidQA.player }));
  }

  VidQA.clock = clock;
  VidQA.createPlayer = createPlayer;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
