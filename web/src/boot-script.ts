// The inline script that runs in <head> before the first paint: it applies the saved colour
// theme and hides a dismissed announcement bar, so neither flashes when the app starts. The build
// inlines it into index.html.
import { announcementId, storageKeys } from "./site-config.js";

export function createBootScript(): string {
  const k = JSON.stringify(storageKeys);
  const id = JSON.stringify(announcementId);
  return (
    `(function(){var d=document.documentElement,k=${k};try{var s=localStorage;` +
    `d.setAttribute("data-theme",s.getItem(k.theme)==="dark"?"dark":"light");` +
    `if(s.getItem(k.announcementId)!==${id}){s.setItem(k.announcementId,${id});s.removeItem(k.announcementDismissed);}` +
    `if(s.getItem(k.announcementDismissed)==="true")d.setAttribute("data-announcement-dismissed","true");` +
    `}catch(e){d.setAttribute("data-theme","light");}})();`
  );
}
