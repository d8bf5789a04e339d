function (atEnd) {
  if (this.tagName === 'INPUT' || this.tagName === 'TEXTAREA') {
    try {
      if (atEnd) this.setSelectionRange(this.value.length, this.value.length);
      else this.select();
      return true;
    } catch (error) {  // email and number inputs have no selection to set
      if (!atEnd) { this.select(); return true; }
      return false;
    }
  }
  const range = this.ownerDocument.createRange();
  range.selectNodeContents(this);
  if (atEnd) range.collapse(false);
  const selection = this.ownerDocument.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return true;
}
