// Draws the lighten report from the JSON blob in #report-data. Every value the data carries is
// put into the page with textContent (never as HTML): paths and messages come from user files.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const charts = {};
  const palette = ["#1f6feb", "#2da44e", "#bf8700", "#8250df", "#cf222e", "#0a7d8c", "#e16f24",
                   "#6e7781", "#bf3989", "#116329"];

  // ---- formatting: decimal units, as storage is billed (the same as the terminal) ----
  function bytes(n) {
    const units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let v = n, u = 0;
    while (v >= 1000 && u + 1 < units.length) { v /= 1000; ++u; }
    return u === 0 ? n + " B" : v.toFixed(2) + " " + units[u];
  }
  function count(n) { return Number(n).toLocaleString("en-US"); }
  function pct(x) { return x.toFixed(1) + " %"; }
  function duration(s) {
    if (!(s > 0)) return "-";
    if (s < 60) return s.toFixed(1) + " s";
    const t = Math.round(s);
    if (t < 3600) return Math.floor(t / 60) + " min " + String(t % 60).padStart(2, "0") + " s";
    return Math.floor(t / 3600) + " h " + String(Math.floor(t / 60) % 60).padStart(2, "0") + " min";
  }
  function ms(x) { return x >= 1000 ? (x / 1000).toFixed(2) + " s" : x.toFixed(1) + " ms"; }
  function score(x) { return x === null || x === undefined ? "" : x.toFixed(1); }

  // ---- DOM helpers ----
  function el(tag, props, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }
  // A column: header, how to show a row's value, the value to sort by, numeric or not.
  function column(title, show, sortValue, numeric, cls) {
    return { title, show, sortValue: sortValue || show, numeric: !!numeric, cls: cls || "" };
  }
  function fillTable(table, columns, rows, rowClass) {
    table.textContent = "";
    const head = el("tr", {}, columns.map((c) =>
      el("th", { text: c.title, class: c.numeric ? "num" : "", scope: "col" })));
    table.appendChild(el("thead", {}, [head]));
    const body = el("tbody");
    for (const row of rows) {
      const tr = el("tr", rowClass ? { class: rowClass(row) } : {});
      for (const c of columns) {
        const td = el("td", { text: String(c.show(row)), class: (c.numeric ? "num " : "") + c.cls });
        td.dataset.sort = String(c.sortValue(row));
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    if (table.classList.contains("sortable")) makeSortable(table, columns);
  }
  function makeSortable(table, columns) {
    table.querySelectorAll("th").forEach((th, index) => {
      th.addEventListener("click", () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th").forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const numeric = columns[index].numeric;
        rows.sort((a, b) => {
          const x = a.cells[index].dataset.sort, y = b.cells[index].dataset.sort;
          const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        for (const row of rows) body.appendChild(row);
      });
    });
  }
  function card(id, label, value, raw, sub, headline) {
    const node = el("div", { class: "card" + (headline ? " headline" : ""), id }, [
      el("div", { class: "label", text: label }),
      el("div", { class: "value", text: value }),
    ]);
    node.dataset.value = String(raw);
    if (sub) node.appendChild(el("div", { class: "sub", text: sub }));
    return node;
  }
  function hideChart(canvasId, why, noteId) {
    document.getElementById(canvasId).parentElement.classList.add("empty");
    document.getElementById(noteId).textContent = why;
  }

  Chart.defaults.animation = false;  // drawn once, at once: also for printing and screenshots
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  const byteAxis = { ticks: { callback: (v) => bytes(v) } };

  // ---- sections ----
  function header() {
    const modes = [...new Set(data.runs.map((r) => (r.policy || {}).mode).filter(Boolean))];
    document.getElementById("subtitle").textContent =
      data.source + " \u00b7 " + count(data.totals.files) + " files" +
      (modes.length ? " \u00b7 mode " + modes.join(", ") : "") + " \u00b7 generated " +
      data.generated;
    document.getElementById("dry-run-banner").hidden = !data.dry_run;
    const stopped = data.stopped || {};
    const banner = document.getElementById("stopped-banner");
    banner.hidden = !stopped.because;
    if (stopped.because)
      banner.textContent = "This run stopped before it finished (" + stopped.because + "): " +
        count(stopped.not_started) + " files were not started and are not counted here. " +
        "The same command goes on from where it stopped when the run kept a journal.";
    document.getElementById("footer").textContent = "lighten " + data.version +
      " \u00b7 every figure is computed from the journal; the page loads nothing from the network.";
  }

  function totals() {
    const t = data.totals;
    const cards = document.getElementById("total-cards");
    cards.append(
      card("total-saved-percent", "saved", pct(t.saved_percent), t.saved_percent,
           bytes(t.saved_bytes) + " fewer bytes", true),
      card("total-bytes-before", "before", bytes(t.bytes_before), t.bytes_before),
      card("total-bytes-after", "after", bytes(t.bytes_after), t.bytes_after),
      card("total-saved-bytes", "bytes saved", bytes(t.saved_bytes), t.saved_bytes),
      card("total-files", "files", count(t.files), t.files),
      card("total-optimized", "optimised", count(t.optimized), t.optimized),
      card("total-left-alone", "left alone", count(t.left_alone), t.left_alone,
           t.failed ? count(t.failed) + " failed" : "none failed"),
      card("total-time", "time", duration(t.wall_s), t.wall_s,
           duration(t.cpu_s) + " of worker time"),
      t.from_earlier_runs
        ? card("total-throughput", "throughput", "\u2014", 0,
               count(t.from_earlier_runs) + " files done by an earlier run")
        : card("total-throughput", "throughput", t.mb_per_s.toFixed(1) + " MB/s", t.mb_per_s,
               t.files_per_s.toFixed(1) + " files/s"));
    if (t.scored)
      cards.append(card("total-quality", "lowest SSIMULACRA2", score(t.score_min), t.score_min,
                        "mean " + score(t.score_mean) + " over " + count(t.scored) + " files"));
    document.getElementById("totals-note").textContent =
      "Time runs from each run's start to its last file (overlapping runs count once); " +
      "throughput is bytes read per second of that time." +
      (t.scored ? "" : data.kinds.some(lossyInside)
        ? " No file has a whole-file score: the pictures inside documents and the frames of " +
          "videos were each held to the floor on their own."
        : " Every optimised file kept its decoded pixels and content.");
  }

  function kinds() {
    const rows = data.kinds;
    charts.kinds = new Chart(document.getElementById("chart-kinds"), {
      type: "bar",
      data: {
        labels: rows.map((k) => k.kind),
        datasets: [
          { label: "remaining", data: rows.map((k) => k.bytes_after), backgroundColor: "#9ab4d6" },
          { label: "saved", data: rows.map((k) => k.saved_bytes), backgroundColor: "#2da44e" },
        ],
      },
      options: {
        scales: { x: { stacked: true }, y: Object.assign({ stacked: true }, byteAxis) },
        plugins: { tooltip: { callbacks: {
          label: (c) => c.dataset.label + ": " + bytes(c.raw),
          footer: (items) => pct(rows[items[0].dataIndex].saved_percent) + " saved",
        } } },
      },
    });
    fillTable(document.getElementById("table-kinds"), [
      column("kind", (k) => k.kind),
      column("files", (k) => count(k.files), (k) => k.files, true),
      column("optimised", (k) => count(k.optimized), (k) => k.optimized, true),
      column("before", (k) => bytes(k.bytes_before), (k) => k.bytes_before, true),
      column("after", (k) => bytes(k.bytes_after), (k) => k.bytes_after, true),
      column("saved", (k) => pct(k.saved_percent), (k) => k.saved_percent, true),
      column("quality", (k) => k.scored ? "SSIMULACRA2 \u2265 " + score(k.score_min) +
               " (mean " + score(k.score_mean) + ")" : unscoredQuality(k),
             (k) => k.scored ? k.score_min : 1000, true),
      column("worker time", (k) => duration(k.cpu_s), (k) => k.cpu_s, true),
    ], rows);
  }

  // Kinds whose files lighten optimises losslessly in every mode.
  const alwaysLossless = ["png", "gif", "webp", "tiff", "zip", "jar", "unknown"];

  // Whether any run of the journal was in a perceptual mode.
  function perceptualRun() {
    return data.runs.some((r) => ((r.policy || {}).mode || "lossless") !== "lossless");
  }

  // Whether an optimised kind may have changed within the floor without a whole-file score:
  // documents' pictures and videos' frames in a perceptual run.
  function lossyInside(k) {
    return k.optimized > 0 && !k.scored && perceptualRun() && !alwaysLossless.includes(k.kind);
  }

  // Kinds without a whole-file score: lossless, or (in a perceptual run) containers whose
  // pictures each met the floor on their own.
  function unscoredQuality(k) {
    if (!k.optimized) return "unchanged";
    return lossyInside(k) ? "pictures inside at the floor" : "lossless";
  }

  function histogram() {
    const bins = data.savings_bins, width = data.bin_percent;
    const optimised = bins.reduce((a, b) => a + b, 0);
    if (!optimised) return hideChart("chart-histogram", "No file was made smaller.", "histogram-note");
    let last = bins.length - 1;
    while (last > 0 && bins[last] === 0) --last;
    last = Math.max(last, Math.min(bins.length - 1, 9));
    const labels = [];
    for (let i = 0; i <= last; ++i) labels.push(i * width + "\u2013" + (i + 1) * width + " %");
    document.getElementById("histogram-note").textContent = count(optimised) +
      " optimised files by the share of their size saved; " + count(data.totals.left_alone) +
      " files left alone are not counted.";
    charts.histogram = new Chart(document.getElementById("chart-histogram"), {
      type: "bar",
      data: { labels, datasets: [{ label: "files", data: bins.slice(0, last + 1),
                                   backgroundColor: "#1f6feb", barPercentage: 1,
                                   categoryPercentage: 0.95 }] },
      options: { plugins: { legend: { display: false } },
                 scales: { x: { title: { display: true, text: "saved" } },
                           y: { title: { display: true, text: "files" }, beginAtZero: true } } },
    });
  }

  function scatter() {
    const s = data.scatter;
    if (!s.points.length)
      return hideChart("chart-scatter", data.kinds.some(lossyInside)
        ? "No whole-file scores to plot: no JPEG was requantised; the pictures inside " +
          "documents and the frames of videos were each held to the floor on their own."
        : "No perceptual outputs: every optimised file kept its decoded pixels, so there is " +
          "no score to plot.", "quality-note");
    document.getElementById("quality-note").textContent = "SSIMULACRA2 of each perceptual " +
      "output against its original (higher is closer; 90 and above is hard to tell apart) " +
      "and the bytes it saved. " + (s.points.length < s.population
        ? count(s.points.length) + " of " + count(s.population) + " files, a fixed sample."
        : count(s.population) + " files.");
    const datasets = s.kinds.map((kind, index) => ({
      label: kind,
      data: s.points.filter((p) => p[3] === index).map((p) => ({ x: p[0], y: Math.max(1, p[1]), p })),
      backgroundColor: palette[index % palette.length] + "aa",
      pointRadius: s.points.length > 2000 ? 2 : 3.5,
    }));
    charts.scatter = new Chart(document.getElementById("chart-scatter"), {
      type: "scatter",
      data: { datasets },
      options: {
        scales: {
          x: { title: { display: true, text: "SSIMULACRA2" } },
          y: { type: "logarithmic", title: { display: true, text: "bytes saved" },
               // Powers of ten only: a label at every 2, 3, 5 would overlap.
               ticks: { callback: (v) => (Math.log10(v) % 1 === 0 ? bytes(v) : "") } },
        },
        plugins: { tooltip: { callbacks: { label: (c) => c.raw.p[4] + ": " + bytes(c.raw.p[1]) +
          " of " + bytes(c.raw.p[2]) + " saved, SSIMULACRA2 " + score(c.raw.p[0]) } } },
      },
    });
  }

  function leftAlone() {
    const groups = data.left_alone;
    const files = data.totals.files || 1;
    document.getElementById("left-alone-note").textContent = groups.length
      ? "Files kept exactly as they were, with why and what to do. The largest of each reason " +
        "are listed below the table."
      : data.totals.files ? ((data.stopped || {}).because ? "Every file the run reached was " +
        "optimised." : "Every file was optimised.") : "The journal holds no files yet.";
    fillTable(document.getElementById("table-reasons"), [
      column("reason", (g) => g.reason),
      column("files", (g) => count(g.files), (g) => g.files, true),
      column("share", (g) => pct(100 * g.files / files), (g) => g.files, true),
      column("bytes", (g) => bytes(g.bytes), (g) => g.bytes, true),
      column("what to do", (g) => g.advice),
    ], groups, (g) => (g.failure ? "failure" : ""));
    const holder = document.getElementById("reason-examples");
    for (const g of groups) {
      const table = el("table", { class: "sortable" });
      const details = el("details", {}, [
        el("summary", { text: g.reason + ": " + count(g.files) + " files, " + bytes(g.bytes) +
                              (g.examples.length < g.files ? " (the " + g.examples.length +
                               " largest shown)" : "") }),
        table,
      ]);
      details.dataset.reason = g.reason;
      holder.appendChild(details);
      fillTable(table, [
        column("file", (e) => e.path, null, false, "path"),
        column("kind", (e) => e.kind),
        column("size", (e) => bytes(e.bytes_before), (e) => e.bytes_before, true),
        column("why", (e) => e.message),
      ], g.examples);
    }
  }

  function savedPercent(e) {
    return 100 * (e.bytes_before - e.bytes_after) / (e.bytes_before || 1);
  }

  function slowest() {
    const rows = data.slowest;
    document.getElementById("slowest-note").textContent =
      "The files that took longest, and what came of them.";
    fillTable(document.getElementById("table-slowest"), [
      column("file", (e) => e.path, null, false, "path"),
      column("kind", (e) => e.kind),
      column("time", (e) => ms(e.ms), (e) => e.ms, true),
      column("size", (e) => bytes(e.bytes_before), (e) => e.bytes_before, true),
      column("MB/s", (e) => (e.ms > 0 ? (e.bytes_before / 1e3 / e.ms).toFixed(2) : "-"),
             (e) => (e.ms > 0 ? e.bytes_before / e.ms : 0), true),
      column("result", (e) => e.action === "optimized"
               ? "saved " + pct(savedPercent(e)) : "left alone: " + e.reason,
             (e) => e.action === "optimized" ? savedPercent(e) : -1, true),
    ], rows);
  }

  function probe() {
    const probes = data.probes;
    const rows = [];
    for (const p of probes) {
      const name = probes.length > 1 ? p.file.split("/").pop() + ": " : "";
      rows.push(Object.assign({ label: name + "original", probe: p }, p.original));
      if (p.optimised) rows.push(Object.assign({ label: name + "optimised", probe: p }, p.optimised));
    }
    if (!rows.length)
      return hideChart("chart-probe", "No probe given. Measure the loader on the original and " +
                       "the optimised tree with `lighten probe DATA --compare OUT --json " +
                       "probe.json`, then pass --probe probe.json to `lighten report`.",
                       "probe-note");
    const first = probes[0];
    const link = first.bandwidth_bytes_per_s > 0
      ? (first.bandwidth_bytes_per_s * 8 / 1e6).toFixed(0) + " Mbit/s link, " +
        first.latency_ms + " ms per open" : "local storage";
    let note = "Time per sample: what a loader worker spends opening, reading and decoding, and " +
      "how long the training step waits for data. " + first.workers + " workers, batch " +
      first.batch + ", " + link + ".";
    if (first.optimised)
      note += " The step waits " + pct(100 * first.original.consumer_wait) + " of the time " +
        "before and " + pct(100 * first.optimised.consumer_wait) + " after; the loader " +
        "delivers " + first.original.samples_per_s.toFixed(1) + " \u2192 " +
        first.optimised.samples_per_s.toFixed(1) + " samples/s.";
    document.getElementById("probe-note").textContent = note;
    const stages = [["open", "open_ms", "#8250df"], ["read", "read_ms", "#1f6feb"],
                    ["decode", "decode_ms", "#bf8700"], ["wait", "wait_ms", "#cf222e"]];
    charts.probe = new Chart(document.getElementById("chart-probe"), {
      type: "bar",
      data: { labels: rows.map((r) => r.label),
              datasets: stages.map(([label, key, color]) => ({
                label, data: rows.map((r) => r[key]), backgroundColor: color })) },
      options: {
        indexAxis: "y",
        scales: { x: { stacked: true, title: { display: true, text: "ms per sample" } },
                  y: { stacked: true } },
        plugins: { tooltip: { callbacks: { label: (c) => c.dataset.label + ": " + ms(c.raw) } } },
      },
    });
    fillTable(document.getElementById("table-probe"), [
      column("tree", (r) => r.label),
      column("open", (r) => ms(r.open_ms), (r) => r.open_ms, true),
      column("read", (r) => ms(r.read_ms), (r) => r.read_ms, true),
      column("decode", (r) => ms(r.decode_ms), (r) => r.decode_ms, true),
      column("wait", (r) => ms(r.wait_ms), (r) => r.wait_ms, true),
      column("samples/s", (r) => r.samples_per_s.toFixed(1), (r) => r.samples_per_s, true),
      column("bound by", (r) => r.bound),
      column("sample", (r) => count(r.sample_files) + " files, " + bytes(r.sample_bytes),
             (r) => r.sample_bytes, true),
    ], rows);
  }

  function runs() {
    fillTable(document.getElementById("table-runs"), [
      column("run", (r) => r.run_id),
      column("started", (r) => r.started || "-"),
      column("took", (r) => duration(r.seconds), (r) => r.seconds, true),
      column("policy", (r) => Object.entries(r.policy || {}).map(([k, v]) => k + "=" + v).join("  ")),
    ], data.runs);
  }

  // One section failing must not blank the page: draw the rest and say what broke.
  for (const [name, draw] of [["header", header], ["totals", totals], ["kinds", kinds],
                              ["histogram", histogram], ["quality", scatter],
                              ["left-alone", leftAlone], ["slowest", slowest], ["probe", probe],
                              ["runs", runs]]) {
    try {
      draw();
    } catch (error) {
      console.error("lighten report: could not draw " + name + ": " + error);
      const section = document.getElementById(name);
      if (section) section.appendChild(el("p", { class: "banner", text: "Could not draw this " +
                                                 "section: " + error }));
    }
  }
  window.lightenReport = { data, charts };
  document.documentElement.dataset.ready = "yes";
})();
