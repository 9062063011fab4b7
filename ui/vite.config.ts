import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vite";

// The build lands inside the Python package, where `kairox.web` serves it; the folder is git-ignored and made
// only by this build (`make ui`, or the wheel's build hook). outDir is relative to this folder.
export default defineConfig({
  plugins: [vue()],
  base: "/",
  build: {
    outDir: "../src/kairox/web/static",
    emptyOutDir: true,
    target: "es2022",
  },
});
