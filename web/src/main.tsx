// Entry point: starts navigation and prefetching and renders the app.
import { createRoot } from "react-dom/client";
import { App } from "./app.js";
import { startNavigation } from "./routing/navigation.js";
import { startHoverPreload } from "./routing/prefetch.js";
import "./styles.css";

startNavigation();
startHoverPreload();
createRoot(document.getElementById("root")!).render(<App />);
