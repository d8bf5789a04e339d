function () {
HELD
  return idOf(this);
}
