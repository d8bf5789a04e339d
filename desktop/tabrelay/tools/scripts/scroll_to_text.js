((needle) => {
  const lower = needle.toLowerCase();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.toLowerCase().includes(lower) && node.parentElement
        && node.parentElement.getClientRects().length) {
      node.parentElement.scrollIntoView({block: 'center', behavior: 'instant'});
      return node.parentElement.innerText.trim().slice(0, 120);
    }
  }
  return null;
})
