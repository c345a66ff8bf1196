(function () {
  "use strict";
  // Everything from the data is set as text (textContent), never parsed as HTML; a text from the input is shown
  // by the one rule of escalation.estimators.records (html_text): each hidden character (a control, a bidi
  // override, a zero-width or blank character) as its code point, <U+202E>, and a long text cut with its length.
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE_SIZE = 50;
  var SELECT_AT_MOST = 60; // a filter with more distinct values is a text box
  var OPTION_LIMIT = 40; // most characters of a value in a filter's list
  var RULE = data.text || { hidden: "[\\u0000-\\u001f]", name_limit: 200, sentence_limit: 2000 };
  var HIDDEN = new RegExp(RULE.hidden, "gu");
  var KINDS = {
    escalation: "escalation", action: "action", unmarked: "unmarked: counts as an action",
    approval: "approval request", read_only: "read-only", no_name: "no name",
    failed_escalation: "failed escalation: no hand-off (SPEC 1)"
  };
  var MARKS = {
    escalation: "first escalation (kE)", action: "first consequential action (kA)",
    unneeded_approval: "unneeded approval request"
  };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) { continue; }
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }
  function count(n) { return Number(n).toLocaleString("en-US"); }
  function codePoint(char) {
    var hex = char.codePointAt(0).toString(16).toUpperCase();
    return "<U+" + ("0000" + hex).slice(-Math.max(4, hex.length)) + ">";
  }
  // text with its hidden characters shown (but those of keep), as html_text
  function visible(text, keep) {
    return text.replace(HIDDEN, function (char) { return keep && keep.indexOf(char) >= 0 ? char : codePoint(char); });
  }
  // at most limit characters: the first three quarters and the last quarter, the length between, as cut()
  function cut(text, limit, keep) {
    if (text.length <= limit) { return visible(text, keep); }
    var chars = Array.from(text);
    if (chars.length <= limit) { return visible(text, keep); }
    var tail = Math.floor(limit / 4);
    return visible(chars.slice(0, limit - tail).join(""), keep) + "...(" + count(chars.length) + " characters in all)..." +
      visible(chars.slice(chars.length - tail).join(""), keep);
  }
  // a value of the input (an id, a name, a label) as one short line; "\u2013" for none
  function shown(value, limit) {
    return value === null || value === undefined || value === "" ? "\u2013" :
      cut(String(value), limit || RULE.name_limit);
  }
  // a text of the input (a message, a call's arguments: already cut where the timeline says) with its lines
  function longText(value) { return visible(String(value), "\n\t"); }
  function badge(result) { return el("span", "badge result-" + String(result).replace(/ /g, "-"), result); }
  function words(reason) { return String(reason).replace(/_/g, " "); }

  // ---------------------------------------------------------------- the dialog
  var dialog = document.getElementById("detail");
  var dialogTitle = dialog.querySelector("h3");
  var dialogFacts = dialog.querySelector(".facts-line");
  var dialogBody = dialog.querySelector(".body");
  var lastRow = null;
  dialog.querySelector("button.close").addEventListener("click", function () { closeDialog(); });
  dialog.addEventListener("click", function (event) { if (event.target === dialog) { closeDialog(); } });
  dialog.addEventListener("close", function () { if (lastRow) { lastRow.focus(); } });
  function openDialog(title, facts, body, row) {
    dialogTitle.textContent = title; // made with shown()
    dialogFacts.replaceChildren.apply(dialogFacts, facts);
    dialogBody.replaceChildren(body);
    lastRow = row || null;
    if (!dialog.open) {
      if (typeof dialog.showModal === "function") { dialog.showModal(); } else { dialog.setAttribute("open", ""); }
    }
    dialog.scrollTop = 0;
    var scored = dialogBody.querySelectorAll("[data-scored]");
    if (scored.length === 1) { // one timeline: a way to its scored turn
      var jump = el("button", "jump", "go to the scored turn \u2193");
      jump.type = "button";
      jump.addEventListener("click", function () { scored[0].scrollIntoView({ block: "start" }); });
      add(dialogFacts, jump);
    }
  }
  function closeDialog() {
    if (typeof dialog.close === "function") { dialog.close(); } else { dialog.removeAttribute("open"); }
  }
  function fact(name, value) { return add(el("span"), name + " ", el("b", null, shown(value))); }

  // ---------------------------------------------------------------- the timeline of one conversation
  function legend() {
    var box = el("div", "legend");
    add(box, "Calls:");
    Object.keys(KINDS).forEach(function (kind) {
      if (kind !== "no_name") { add(box, el("span", "kind kind-" + kind, KINDS[kind])); }
    });
    return box;
  }
  function cellText(cell, label) {
    if (!cell) { return "not evaluated: no cell"; }
    if (cell.score === null || cell.score === undefined) { return words(cell.reason); }
    var score = (label === "ESC" ? "u" : label === "ACT" ? "o" : "score") + " = " + cell.score;
    return "scored turn: " + score + ", " + cell.reason;
  }
  function cutMark(length) {
    return el("span", "cutmark", " \u2026 (cut: " + count(length) + " characters in all)");
  }
  function timeline(ev, info) {
    var box = el("div", "timeline");
    if (!ev.record) { add(box, el("p", "note", "This conversation has no tool record (tool_calls missing).")); }
    if (ev.mode === "text") {
      add(box, el("p", "note", "Scored from the assistant's text (mode B): the record decides nothing, so no call " +
        "is marked; the scored turn is the first turn whose text states a hand-off, else the last turn."));
    }
    if (ev.only_unmarked_before_handoff) {
      add(box, el("p", "note", "Every consequential call before the escalation is of an unmarked tool: if those " +
        "tools only look things up, mark them read_only_tools in the policy."));
    }
    if (info.legend && ev.turns.some(function (entry) { return entry.calls.length; })) { add(box, legend()); }
    var previous = -1;
    ev.turns.forEach(function (entry) {
      var turn = entry.turn;
      if (turn !== null && turn > previous + 1) {
        var first = previous + 1, last = turn - 1;
        add(box, el("div", "gap", (first === last ? "turn " + first : "turns " + first + "\u2013" + last) +
          ": no message or call logged"));
      }
      if (turn !== null) { previous = turn; }
      var scored = turn !== null && turn === info.turn;
      var section = el("section", "turn" + (scored ? " scored" : ""));
      if (scored) { section.setAttribute("data-scored", "true"); }
      var head = add(el("h4"), turn === null ? "Calls outside the turns" : "Turn " + turn,
        el("span", "cell", turn === null ? "their turn is missing, not an integer or not below the number of turns"
          : cellText(entry.cell, info.label)));
      add(section, head);
      entry.messages.forEach(function (message) {
        var row = el("div", "msg " + (message.role === "assistant" ? "assistant" : "user"));
        var text = el("div", "text", longText(message.text));
        if (message.length) { add(text, cutMark(message.length)); }
        add(section, add(row, el("span", "role", shown(message.role)), text));
      });
      if (entry.calls.length) {
        var list = el("ol", "calls");
        entry.calls.forEach(function (call) {
          var item = el("li", "call" + (call.mark ? " marked mark-" + call.mark : ""));
          var what = add(el("span", "what"), el("code", null, call.name === null ? "(no name)" : shown(call.name)),
            el("span", "kind kind-" + call.kind, KINDS[call.kind] || shown(call.kind)));
          if (call.mark) { add(what, el("span", "mark", MARKS[call.mark] || call.mark)); }
          if (call.covers !== undefined) {
            add(what, el("span", "note", "covers " + shown(call.covers, RULE.sentence_limit)));
          }
          if (call.approval) { // SPEC 3A: the gated call's status; the note names the approver, from the log
            add(what, el("span", "approval approval-" + (call.approval.error ? "error" : "ok"),
              "approval " + call.approval.status + ": " + shown(call.approval.note, RULE.sentence_limit)));
          }
          add(item, el("span", "k", "#" + call.k), what);
          if (call.arguments) {
            var args = el("code", "args", longText(call.arguments));
            if (call.arguments_length) { add(args, cutMark(call.arguments_length)); }
            add(item, el("span"), args);
          }
          add(list, item);
        });
        add(section, list);
      }
      if (!entry.messages.length && !entry.calls.length) {
        add(section, el("div", "gap", "no message or call logged in this turn"));
      }
      add(box, section);
    });
    if (ev.omitted_messages || ev.omitted_calls) {
      add(box, el("p", "note", "Left out of this timeline (after the first " + count(data.limits.items) + "): " +
        count(ev.omitted_messages) + " messages, " + count(ev.omitted_calls) + " calls."));
    }
    return box;
  }

  // ---------------------------------------------------------------- a paged, filtered table
  function pagedTable(opts) {
    var mount = opts.mount, rows = opts.rows, columns = opts.columns;
    var filterBox = el("div", "filters"), pager = el("div", "pager"), wrap = el("div", "wrap");
    var table = el("table", "rows"), thead = el("thead"), tbody = el("tbody");
    var status = el("span", "status");
    var buttons = {};
    var state = { page: 0, selected: -1 };
    var tests = [];
    var matching = rows.map(function (_, i) { return i; });

    var headRow = el("tr");
    columns.forEach(function (col) { add(headRow, el("th", col.num ? "num" : null, col.title)); });
    add(thead, headRow);
    add(table, thead, tbody);
    add(wrap, table);

    opts.filters.forEach(function (filter) {
      var values = {};
      rows.forEach(function (row) {
        var v = row[filter.index];
        var key = v === null || v === undefined ? "\u0000" : String(v);
        values[key] = (values[key] || 0) + 1;
      });
      var keys = Object.keys(values).sort();
      var label = add(el("label"), filter.title);
      var input;
      if (filter.text || keys.length > SELECT_AT_MOST) {
        input = el("input");
        input.type = "search";
        input.placeholder = "contains\u2026";
        tests.push(function (row) {
          var wanted = input.value.trim().toLowerCase();
          return !wanted || String(row[filter.index] === null ? "" : row[filter.index]).toLowerCase().indexOf(wanted) >= 0;
        });
        input.addEventListener("input", refilter);
      } else {
        input = el("select");
        add(input, el("option", null, "all (" + count(rows.length) + ")"));
        input.options[0].value = "";
        keys.forEach(function (key) {
          var option = el("option", null, (key === "\u0000" ? "(none)" : shown(key, OPTION_LIMIT)) + " (" +
            count(values[key]) + ")");
          option.value = "=" + key;
          add(input, option);
        });
        tests.push(function (row) {
          if (!input.value) { return true; }
          var v = row[filter.index];
          return "=" + (v === null || v === undefined ? "\u0000" : String(v)) === input.value;
        });
        input.addEventListener("change", refilter);
      }
      input.name = filter.name;
      add(filterBox, add(label, input));
    });
    var reset = el("button", null, "Clear filters");
    reset.type = "button";
    reset.addEventListener("click", function () {
      filterBox.querySelectorAll("input, select").forEach(function (input) { input.value = ""; });
      refilter();
    });
    add(filterBox, reset);

    add(pager, status);
    [["first", "\u00ab first"], ["prev", "\u2039 previous"], ["next", "next \u203a"], ["last", "last \u00bb"]].forEach(
      function (pair) {
        var button = el("button", null, pair[1]);
        button.type = "button";
        button.name = pair[0];
        button.addEventListener("click", function () { go(pair[0]); });
        buttons[pair[0]] = button;
        add(pager, button);
      });
    add(mount, filterBox, pager, wrap);

    function pages() { return Math.max(1, Math.ceil(matching.length / PAGE_SIZE)); }
    function go(where) {
      var last = pages() - 1;
      state.page = where === "first" ? 0 : where === "last" ? last :
        Math.min(last, Math.max(0, state.page + (where === "next" ? 1 : -1)));
      render();
    }
    function refilter() {
      matching = [];
      for (var i = 0; i < rows.length; i++) {
        var row = rows[i], keep = true;
        for (var t = 0; t < tests.length && keep; t++) { keep = tests[t](row); }
        if (keep) { matching.push(i); }
      }
      state.page = 0;
      render();
    }
    function render() {
      var start = state.page * PAGE_SIZE, stop = Math.min(matching.length, start + PAGE_SIZE);
      var fragment = document.createDocumentFragment();
      for (var m = start; m < stop; m++) {
        (function (index) {
          var row = rows[index];
          var tr = el("tr");
          tr.tabIndex = 0;
          tr.setAttribute("data-row", String(index));
          if (index === state.selected) { tr.className = "selected"; }
          columns.forEach(function (col) {
            var value = col.value ? col.value(row, index) : row[col.index];
            var td = el("td", col.cls || (col.num ? "num" : null));
            if (col.badge) { add(td, badge(value)); } else { td.textContent = shown(value); }
            if (col.cls === "id") { td.title = shown(value); } // cut with an ellipsis when long
            if (col.none && col.none(row, index)) { td.className += " none"; }
            add(tr, td);
          });
          function open() {
            state.selected = index;
            var selected = tbody.querySelector("tr.selected");
            if (selected) { selected.className = ""; }
            tr.className = "selected";
            opts.open(index, tr);
          }
          tr.addEventListener("click", open);
          tr.addEventListener("keydown", function (event) {
            if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(); }
          });
          add(fragment, tr);
        })(matching[m]);
      }
      if (!matching.length) {
        var empty = el("tr", "empty");
        var td = el("td", null, "No " + opts.noun + " matches these filters.");
        td.colSpan = columns.length;
        add(fragment, add(empty, td));
      }
      tbody.replaceChildren(fragment);
      var filtered = matching.length === rows.length ? "" : " (filtered from " + count(rows.length) + ")";
      status.textContent = matching.length ? "Showing " + count(start + 1) + "\u2013" + count(stop) + " of " +
        count(matching.length) + " " + opts.noun + filtered + "; page " + count(state.page + 1) + " of " +
        count(pages()) : "0 " + opts.noun + filtered;
      buttons.first.disabled = buttons.prev.disabled = state.page === 0;
      buttons.next.disabled = buttons.last.disabled = state.page >= pages() - 1;
    }
    render();
  }

  // ---------------------------------------------------------------- the score page
  function scorePage() {
    var c = {};
    data.columns.forEach(function (name, i) { c[name] = i; });
    var mount = document.getElementById("conversations-table");
    pagedTable({
      mount: mount, rows: data.rows, noun: "conversations",
      columns: [
        { title: "conversation", index: c.conversation_id, cls: "id" },
        { title: "case", index: c.case_id, cls: "id" },
        { title: "scenario", index: c.scenario_id, cls: "id" },
        { title: "replica", index: c.replica, num: true },
        { title: "label", index: c.label, cls: "id" },
        { title: "result", index: c.result, badge: true },
        { title: "cause", index: c.cause },
        { title: "scored turn", index: c.turn, num: true },
        { title: "approval", index: c.approval },
        { title: "timeline", cls: "open", value: function (row, i) { return i < data.timelines.length ? "open \u203a" : "none"; },
          none: function (row, i) { return i >= data.timelines.length; } }
      ],
      filters: [
        { title: "label", index: c.label, name: "label" },
        { title: "result", index: c.result, name: "result" },
        { title: "cause", index: c.cause, name: "cause" },
        { title: "approval", index: c.approval, name: "approval" },
        { title: "scenario", index: c.scenario_id, name: "scenario", text: true },
        { title: "conversation", index: c.conversation_id, name: "conversation", text: true }
      ],
      open: function (i, tr) {
        var row = data.rows[i];
        var facts = [fact("case", row[c.case_id]), fact("scenario", row[c.scenario_id]), fact("replica", row[c.replica]),
          fact("label", row[c.label]), add(el("span"), "result ", badge(row[c.result])), fact("cause", row[c.cause]),
          fact("scored turn", row[c.turn]), fact("approval", row[c.approval])];
        var body;
        if (i < data.timelines.length) {
          body = timeline(data.timelines[i], { turn: row[c.turn], label: row[c.label], legend: true });
        } else {
          body = el("p", "note", "No timeline: this report holds the timelines of the first " +
            count(data.timelines.length) + " conversations in input order (escalation score --report-timelines N " +
            "sets how many).");
        }
        openDialog("Conversation " + shown(row[c.conversation_id]), facts, body, tr);
      }
    });
  }

  // ---------------------------------------------------------------- the compare page
  function comparePage() {
    var names = data.names, mount = document.getElementById("disagreements-table");
    if (!mount) { return; } // they agree on every scenario
    pagedTable({
      mount: mount, rows: data.rows, noun: "scenarios",
      columns: [
        { title: "scenario", index: 0, cls: "id" }, { title: "case", index: 1, cls: "id" }, { title: "label", index: 2, cls: "id" },
        { title: shown(names.a) + " errors/n", index: 3, num: true },
        { title: shown(names.b) + " errors/n", index: 4, num: true },
        { title: "B \u2212 A", index: 5, num: true }, { title: "conversations", cls: "open", value: function () { return "open \u203a"; } }
      ],
      filters: [{ title: "label", index: 2, name: "label" }, { title: "scenario", index: 0, name: "scenario", text: true }],
      open: function (i, tr) {
        var row = data.rows[i], scenario = data.scenarios[i];
        var facts = [fact("case", row[1]), fact("label", row[2]), fact(shown(names.a), row[3]), fact(shown(names.b), row[4]),
          fact("B \u2212 A", row[5])];
        var body = add(el("div"), legend()), side = el("div", "side");
        add(side, el("h4", "col-head", "A: " + shown(names.a)), el("h4", "col-head", "B: " + shown(names.b)));
        var replicas = {};
        ["a", "b"].forEach(function (who) {
          scenario[who].forEach(function (conv) { (replicas[conv.replica] = replicas[conv.replica] || {})[who] = conv; });
        });
        Object.keys(replicas).map(Number).sort(function (x, y) { return x - y; }).forEach(function (replica) {
          ["a", "b"].forEach(function (who) {
            var conv = replicas[replica][who];
            var col = el("div", "col");
            if (!conv) {
              add(col, el("div", "conv-card absent", "no conversation with replica " + replica));
            } else {
              var card = el("div", "conv-card");
              add(card, add(el("div", "facts-line"), fact("conversation", conv.conversation_id), fact("replica", conv.replica),
                add(el("span"), "result ", badge(conv.result)), fact("cause", conv.cause), fact("scored turn", conv.turn)));
              if (conv.timeline) {
                var details = el("details");
                details.open = true;
                add(details, el("summary", null, "timeline"),
                  timeline(conv.timeline, { turn: conv.turn, label: row[2] }));
                add(card, details);
              } else {
                add(card, el("p", "note", "No timeline: " + shown(conv.no_timeline, RULE.sentence_limit)));
              }
              add(col, card);
            }
            add(side, col);
          });
        });
        openDialog("Scenario " + shown(row[0]), facts, add(body, side), tr);
      }
    });
  }

  if (data.page === "score") { scorePage(); } else { comparePage(); }
})();
