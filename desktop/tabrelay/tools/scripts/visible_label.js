function () {
  return Array.from(this.labels).find((l) => l.getBoundingClientRect().width > 0);
}
