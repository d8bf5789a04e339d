(control) => {
  if (!control || control.nodeType !== 1) return null;
  if (String(control.type || '').toLowerCase() === 'password') return 'password';
  // A text field drawn as dots, the way some sites hide a password or a PIN.
  const security = getComputedStyle(control).webkitTextSecurity;
  if (security && security !== 'none') return 'password';
  const tokens = String(control.getAttribute('autocomplete') || '').toLowerCase().split(/\s+/);
  if (tokens.includes('current-password') || tokens.includes('new-password')) return 'password';
  if (tokens.includes('one-time-code')) return 'one-time code';
  if (tokens.some((t) => t.startsWith('cc-'))) return 'card detail';
  return null;
}
