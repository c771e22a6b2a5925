/** The authenticated caller of a request. */
export interface Principal {
  /** Resource name `users/<sub>`; what policies and `creator` fields hold. */
  readonly name: string;
  /** The token's `sub`. */
  readonly subject: string;
  /** The `name` claim, else `preferred_username`, else the subject. */
  readonly displayName: string;
  /** Identity-provider roles (matched against profiles' assigned roles). */
  readonly roles: readonly string[];
  /** Embedded `--admin` token, or listed among the policy's admins. */
  readonly admin: boolean;
}

export const PRINCIPAL_PREFIX = "users/";

export function principalName(subject: string): string {
  return `${PRINCIPAL_PREFIX}${subject}`;
}
