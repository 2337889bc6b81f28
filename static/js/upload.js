// Multi-file upload: one request per file, so each gets its own progress bar and its own outcome.
// Files go one after another (a 2-core server decodes each one); the page stays usable meanwhile.
(function () {
  "use strict";

  function csrfToken(form) {
    return form.querySelector("input[name=csrfmiddlewaretoken]").value;
  }

  function row(list, file) {
    const li = document.createElement("li");
    li.className = "upload";
    const name = document.createElement("span");
    name.className = "upload-name";
    name.textContent = file.name;
    const bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", gettext("Upload of ") + file.name);
    const state = document.createElement("span");
    state.className = "upload-state";
    state.textContent = "waiting";
    li.append(name, bar, state);
    list.appendChild(li);
    return { li, bar, state };
  }

  function send(form, file, ui) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      const data = new FormData();
      data.append("file", file);
      xhr.open("POST", form.action);
      xhr.setRequestHeader("X-CSRFToken", csrfToken(form));
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) {
          ui.bar.value = Math.round((100 * e.loaded) / e.total);
          ui.state.textContent = ui.bar.value < 100 ? interpolate(gettext("uploading %s"), [ui.bar.value + "%"]) : gettext("checking…");
        }
      };
      xhr.onload = () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (err) { body = { error: `The server answered ${xhr.status}.` }; }
        ui.bar.value = 100;
        if (body.ok) {
          ui.li.classList.add("ok");
          ui.state.replaceChildren();
          const link = document.createElement("a");
          link.href = body.video.url;
          link.textContent = body.message;
          ui.state.appendChild(link);
          if (body.job) {
            const job = document.createElement("div");
            job.setAttribute("hx-get", body.job.url);
            job.setAttribute("hx-trigger", "load");
            job.setAttribute("hx-swap", "outerHTML");
            ui.li.appendChild(job);
            if (window.htmx) window.htmx.process(job);
          }
        } else {
          ui.li.classList.add("failed");
          ui.state.textContent = body.error || `Upload failed (${xhr.status}).`;
          ui.state.classList.add("error");
          if (body.existing) {
            const link = document.createElement("a");
            link.href = body.existing;
            link.textContent = gettext(" Open the existing video.");
            ui.state.appendChild(link);
          }
        }
        resolve(body.ok);
      };
      xhr.onerror = () => {
        ui.li.classList.add("failed");
        ui.state.textContent = gettext("The connection was lost; nothing was imported. Try again.");
        ui.state.classList.add("error");
        resolve(false);
      };
      ui.state.textContent = gettext("uploading");
      xhr.send(data);
    });
  }

  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-upload]");
    if (!form) return;
    event.preventDefault();
    const input = form.querySelector("input[type=file]");
    const files = Array.from(input.files);
    if (!files.length) { input.focus(); return; }
    const list = document.getElementById("upload-list");
    const rows = files.map((f) => row(list, f));
    input.value = "";
    for (let i = 0; i < files.length; i++) {
      await send(form, files[i], rows[i]);
    }
    document.dispatchEvent(new CustomEvent("vidqa:uploads-done"));
  });
})();
