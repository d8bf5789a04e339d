  const REASON = REASON_TEXT;
  const ATTRIBUTE = ATTRIBUTE_NAME;
  const host = document.createElement("div");
  host.setAttribute(ATTRIBUTE, "");
  const root = host.attachShadow({ mode: "closed" });
  const put = (element, styles) => {
    for (const [name, value] of Object.entries(styles)) {
      element.style.setProperty(name, value, "important");
    }
    return element;
  };
  const HOST = {
    all: "initial", display: "block", position: "fixed", top: "0", left: "0", right: "0",
    bottom: "auto", width: "100%", height: "auto", margin: "0", padding: "0", border: "0",
    background: "transparent", "z-index": "2147483647", visibility: "visible", opacity: "1",
    "pointer-events": "auto", transform: "none", filter: "none", "clip-path": "none",
    overflow: "visible", inset: "0 0 auto 0", "max-width": "none", "max-height": "none",
  };
  const bar = put(document.createElement("div"), {
    display: "flex", "align-items": "center", gap: "12px", padding: "10px 16px",
    background: "#1f2937", color: "#ffffff", font: "15px/1.4 system-ui, sans-serif",
    "box-shadow": "0 2px 8px rgba(0,0,0,.35)", "border-bottom": "3px solid #d97706",
  });
  const label = put(document.createElement("span"), {
    flex: "1", "white-space": "pre-wrap", "overflow-wrap": "anywhere",
  });
  label.textContent = "The agent asks you to: " + REASON;
  const button = (action, text, background) => {
    const b = put(document.createElement("button"), {
      font: "inherit", padding: "6px 16px", border: "0", "border-radius": "6px",
      background, color: "#ffffff", cursor: "pointer",
    });
    b.type = "button";
    b.textContent = text;
    b.setAttribute("data-action", action);
    b.addEventListener("click", (event) => {
      if (!event.isTrusted) return;
      event.stopPropagation();
      TABRELAY_SEND({ ended: action });
    });
    return b;
  };
  bar.append(label, button("done", "Done", "#15803d"), button("cancelled", "Cancel", "#6b7280"));
  root.append(bar);
  const popover = typeof host.showPopover === "function";
  if (popover) host.setAttribute("popover", "manual");
  put(host, HOST);
  const styled = host.style.cssText;
  // Only what is out of place is put back, so its own changes never call it again.
  const ensure = () => {
    if (!document.documentElement) return;
    try {
      if (host.parentNode !== document.documentElement) document.documentElement.append(host);
      if (!host.hasAttribute(ATTRIBUTE)) host.setAttribute(ATTRIBUTE, "");
      if (popover && host.getAttribute("popover") !== "manual") {
        host.setAttribute("popover", "manual");
      }
      if (host.style.cssText !== styled) {
        host.removeAttribute("style");
        put(host, HOST);
      }
      if (popover && !host.matches(":popover-open")) host.showPopover();
    } catch (error) {
      // A page in the middle of replacing its document: the next change tries again.
    }
  };
  const watcher = new MutationObserver(ensure);
  watcher.observe(document, { childList: true, subtree: true });
  watcher.observe(host, { attributes: true });
  host.addEventListener("toggle", ensure);
  const timer = setInterval(ensure, 500);
  TABRELAY_ON_REMOVE(() => {
    watcher.disconnect();
    clearInterval(timer);
    document.removeEventListener("readystatechange", ensure);
    host.remove();
  });
  ensure();
  document.addEventListener("readystatechange", ensure);
