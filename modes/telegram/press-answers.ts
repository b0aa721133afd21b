// The words a press on a review card is answered with when it does nothing, shared by every feature that takes presses.

/** The answer to every press that finds nothing pending for it. */
export const NOT_PENDING = "This is no longer pending.";
/** The answer to a button of a card already decided (an old copy: a card sent again after a lost connection). */
export const ALREADY_DECIDED = "Already decided on another copy of this card; nothing more was done.";
/** The answer to an Approve press on a file whose whole diff had not been shown: the diff was sent instead. */
export const DIFF_FIRST = "Diff sent — review it, then press Approve again.";
/** The answer to a press of an Approve button made before the diff it needed was sent: only a press on the card as it is now approves. */
export const PRESS_AGAIN = "The diff was sent after this button was shown: press Approve on the card again.";
