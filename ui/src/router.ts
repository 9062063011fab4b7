// A router of a few lines: the views are a fixed list, so a path ref and the History API are all it takes.
import { ref } from "vue";

export const routes = [
  { path: "/servers", label: "Servers" },
  { path: "/marketplace", label: "Marketplace" },
  { path: "/skills", label: "Skills" },
  { path: "/agents", label: "Agents" },
  { path: "/plugins", label: "Plugins" },
  { path: "/session", label: "Session" },
  { path: "/trace", label: "Trace" },
  { path: "/doctor", label: "Doctor" },
] as const;

export type RoutePath = (typeof routes)[number]["path"];

function current(): RoutePath {
  const known = routes.find((route) => route.path === window.location.pathname);
  return known ? known.path : "/servers";
}

export const route = ref<RoutePath>(current());

export function navigate(path: RoutePath): void {
  if (path !== window.location.pathname) window.history.pushState(null, "", path);
  route.value = path;
}

export function startRouter(): void {
  // The token came in the query of the first URL; the cookie carries it from now on, so it leaves the address
  // bar (and the history) at once.
  const path = current();
  if (window.location.search || window.location.pathname !== path) {
    window.history.replaceState(null, "", path + window.location.hash);
  }
  route.value = path;
  window.addEventListener("popstate", () => {
    route.value = current();
  });
}
