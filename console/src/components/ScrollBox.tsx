import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { plural } from '../format.js';

/**
 * Columns whose header lies past the box's right edge (at least 1 while the box can scroll further
 * right), followed as the box scrolls or its content or width changes.
 */
function useColumnsBeyond() {
  const ref = useRef<HTMLDivElement>(null);
  const [beyond, setBeyond] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      if (el.scrollWidth - el.clientWidth - el.scrollLeft <= 1) return setBeyond(0);
      const edge = el.getBoundingClientRect().right;
      const heads = [...el.querySelectorAll(':scope > table > thead > tr:last-child > th')];
      setBeyond(Math.max(1, heads.filter((th) => th.getBoundingClientRect().right > edge + 1).length));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    for (const child of el.children) observer.observe(child);
    el.addEventListener('scroll', measure, { passive: true });
    return () => {
      observer.disconnect();
      el.removeEventListener('scroll', measure);
    };
  }, []);
  return { ref, beyond };
}

/**
 * A wide table that scrolls inside its own box, never the page. While columns lie beyond the
 * right edge (on a phone) the box says so: a shaded right edge and "3 more columns →" above it,
 * a button that scrolls them in (issue 36: nothing showed that a table scrolled).
 */
export function ScrollBox({ children }: { children: ComponentChildren }) {
  const { ref, beyond } = useColumnsBeyond();
  return (
    <div class={beyond ? 'scroll-box more-right' : 'scroll-box'}>
      {beyond > 0 && (
        <button type="button" class="link scroll-cue" data-testid="scroll-cue" onClick={() => ref.current?.scrollBy({ left: ref.current.clientWidth * 0.8, behavior: 'smooth' })}>
          {plural(beyond, 'more column')} →
        </button>
      )}
      <div class="scroll-edge">
        <div class="scroll" ref={ref}>
          {children}
        </div>
      </div>
    </div>
  );
}
