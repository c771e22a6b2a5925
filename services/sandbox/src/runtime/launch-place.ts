// Whether bubblewrap, running as a sandbox's uid, can reach the sandbox's directories: directly
// through the data directory, or at LAUNCH_PLACE, where sandbox-launch puts them.
import * as fs from "node:fs";
import * as path from "node:path";
import { LAUNCH_PLACE } from "./bwrap.js";

let launchPlace: boolean | undefined;

/** Whether LAUNCH_PLACE is (now) an empty directory of root's every user may pass through. */
export function launchPlaceUsable(): boolean {
  if (launchPlace === undefined) {
    try {
      fs.mkdirSync(LAUNCH_PLACE, { recursive: true, mode: 0o755 });
      const st = fs.statSync(LAUNCH_PLACE);
      launchPlace =
        st.isDirectory() &&
        st.uid === 0 &&
        (st.mode & 0o022) === 0 &&
        (st.mode & 0o001) !== 0 &&
        unreachableAncestor(LAUNCH_PLACE) === undefined;
    } catch {
      launchPlace = false;
    }
  }
  return launchPlace;
}

/** The first directory above `dir` that other users may not pass through, if any. */
export function unreachableAncestor(dir: string): string | undefined {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const d = `/${parts.slice(0, i).join("/")}`;
    try {
      if ((fs.statSync(d).mode & 0o001) === 0) return d;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
