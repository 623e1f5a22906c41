// Shared by the chart and report tests: is this SVG well formed enough?

// Tag balance: one root element, every opened tag closed in order.
export function checkTags(xml) {
  const stack = [];
  const roots = [];
  for (const m of xml.replace(/<!--[\s\S]*?-->/g, '').matchAll(/<(\/?)([A-Za-z][\w:-]*)[^>]*?(\/?)>/g)) {
    const [, close, name, self] = m;
    if (stack.length === 0 && !close) roots.push(name);
    if (self) continue;
    if (close) {
      if (stack.pop() !== name) return { root: roots[0], ok: false };
    } else stack.push(name);
  }
  return { root: roots.length === 1 ? roots[0] : roots, ok: stack.length === 0 };
}
