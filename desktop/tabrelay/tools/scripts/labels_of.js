() => {
  // ``labelsOf(field)``: the <label>s of a field, in tree order (what its ``labels`` lists),
  // or none. Each tree (the document, a shadow root) is looked through once, for its labels'
  // ``control``s, by the script that made this: a field's own ``labels`` walks the whole tree
  // each time it is read (some 40 µs a field on a page of 5,000 elements), so reading every
  // field's cost the square of the page.
  const trees = new Map();
  return (el) => {
    const root = el.getRootNode();
    let fields = trees.get(root);
    if (fields === undefined) {
      trees.set(root, (fields = new Map()));
      for (const label of root.querySelectorAll('label')) {
        const control = label.control;
        if (!control) continue;
        const labels = fields.get(control);
        if (labels) labels.push(label);
        else fields.set(control, [label]);
      }
    }
    return fields.get(el) || [];
  };
}
