/**
 * Raw payloads of one user's data from one provider and generation share a namespace (a folder
 * under DATA_DIR/raw, or a GridFS metadata value), so that erasing that data removes exactly
 * them, whatever got stored without being registered (a crash between storing and registering).
 * Payloads stored before generations existed sit in the user's own namespace (`legacyRawNamespace`).
 */
export const rawNamespace = (userId: string, provider: string, generation: number): string => `${userId}_${provider}_${generation}`;

export const legacyRawNamespace = (userId: string): string => userId;
