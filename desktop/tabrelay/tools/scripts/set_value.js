function (value) {
  const win = this.ownerDocument.defaultView;
  const set = Object.getOwnPropertyDescriptor(win.HTMLInputElement.prototype, 'value').set;
  const before = this.value;
  set.call(this, value);
  if (this.value !== value) {  // not a value this field takes: it keeps the one it had
    set.call(this, before);
    return false;
  }
  this.dispatchEvent(new win.Event('input', {bubbles: true}));
  this.dispatchEvent(new win.Event('change', {bubbles: true}));
  return true;
}
