(() => {
  // Reads of the DOM a page cannot change. A <form>'s controls named like its properties stand
  // in for them when they are read on the form (DOM clobbering, which holds in Tabrelay's world
  // too): <input name="childNodes"> makes form.childNodes that input, <input name="tagName">
  // its tagName, <input name="parentElement"> a loop. Read through the prototypes, each is the
  // node's own. (Only forms are so: other elements and text nodes have no named properties.)
  const N = Node.prototype;
  const E = Element.prototype;
  const H = HTMLElement.prototype;
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const nodeType = getter(N, 'nodeType');
  const childNodes = getter(N, 'childNodes');
  const parentNode = getter(N, 'parentNode');
  const parentElement = getter(N, 'parentElement');
  const ownerDocument = getter(N, 'ownerDocument');
  const tagName = getter(E, 'tagName');
  const localName = getter(E, 'localName');
  const namespaceURI = getter(E, 'namespaceURI');
  const outerHTML = getter(E, 'outerHTML');
  const F = HTMLFormElement.prototype;
  const formAction = getter(F, 'action');
  const formMethod = getter(F, 'method');
  const formElements = getter(F, 'elements');
  const isForm = (el) =>
    localName.call(el) === 'form' && namespaceURI.call(el) === 'http://www.w3.org/1999/xhtml';
  // What only HTML elements have, read on a form through HTMLElement's getter (an SVG
  // element, which no control can clobber, as it is).
  const html = (name) => {
    const read = getter(H, name);
    return (el) => (isForm(el) ? read.call(el) : el[name]);
  };
  return {
    type: (n) => nodeType.call(n),
    kids: (n) => childNodes.call(n),
    parent: (n) => parentNode.call(n),
    up: (n) => parentElement.call(n),
    doc: (n) => ownerDocument.call(n),
    root: (n) => N.getRootNode.call(n),
    tag: (el) => tagName.call(el),
    name: (el) => localName.call(el),
    space: (el) => namespaceURI.call(el),
    // A form hosts no shadow root; any other element's is read as its own realm's prototype
    // says (where Tabrelay's world gives it the closed roots it was handed: closed_roots.js).
    shadow: (el) => (isForm(el) ? null : el.shadowRoot),
    attr: (el, name) => E.getAttribute.call(el, name),
    has: (el, name) => E.hasAttribute.call(el, name),
    hasAny: (el) => E.hasAttributes.call(el),
    outerHTML: (el) => outerHTML.call(el),
    contains: (node, other) => N.contains.call(node, other),
    matches: (el, selector) => E.matches.call(el, selector),
    closest: (el, selector) => E.closest.call(el, selector),
    query: (el, selector) => E.querySelector.call(el, selector),
    queryAll: (el, selector) => E.querySelectorAll.call(el, selector),
    rect: (el) => E.getBoundingClientRect.call(el),
    // Whether it is drawn at all (not display:none, nor inside content-visibility:hidden).
    drawn: (el) => E.checkVisibility.call(el),
    inert: html('inert'),
    tabIndex: html('tabIndex'),
    isContentEditable: html('isContentEditable'),
    contentEditable: html('contentEditable'),
    editContext: html('editContext'),
    // A form has none of its own.
    disabled: (el) => (isForm(el) ? undefined : el.disabled),
    // A form's: where and how it is sent, and its controls.
    action: (form) => formAction.call(form),
    method: (form) => formMethod.call(form),
    controls: (form) => formElements.call(form),
  };
})()
