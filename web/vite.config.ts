import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Relative asset paths: the server serves web/dist at `/`, and the bundle also works from a
// sub-path or a plain static file server during development.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      // zod (via the SDK) carries comments Rollup cannot place; harmless, and noisy.
      onwarn(warning, warn) {
        if (warning.code === "INVALID_ANNOTATION") return;
        warn(warning);
      },
    },
  },
  logLevel: "warn",
});
