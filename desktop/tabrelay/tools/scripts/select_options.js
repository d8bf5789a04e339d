function (wanted) {
  if (this.tagName !== 'SELECT') return {error: 'not_select'};
  const options = Array.from(this.options);
  const norm = (s) => s.replace(/\s+/g, ' ').trim().toLowerCase();
  const chosen = [];
  for (const want of wanted) {
    const option = options.find((o) => o.value === want)
      || options.find((o) => o.label === want || o.text.trim() === want)
      || options.find((o) => norm(o.label) === norm(want) || norm(o.value) === norm(want));
    if (!option) return {error: 'missing', value: want, options: options.map((o) => o.label)};
    if (option.disabled) return {error: 'disabled_option', value: want};
    chosen.push(option);
  }
  if (!this.multiple && chosen.length > 1) return {error: 'single'};
  for (const option of options) option.selected = chosen.includes(option);
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {ok: true, selected: chosen.map((o) => o.label)};
}
